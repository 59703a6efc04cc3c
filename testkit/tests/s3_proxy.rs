//! The S3 fault proxy in front of a real SeaweedFS server, driven by `object_store`: each
//! fault is seen by the client as S3 would make it seen, and the server's state afterwards is
//! checked directly (not through the proxy).

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    RetryConfig,
};

use geoberg_testkit::{S3Fault, S3FaultProxy, S3FaultRule, S3Server};

struct Setup {
    proxy: S3FaultProxy,
    /// Straight to the server, for checking what really happened.
    direct: Arc<dyn ObjectStore>,
    bucket: String,
}

fn setup() -> Setup {
    let s3 = S3Server::shared();
    let bucket = s3.fresh_bucket().unwrap();
    let proxy = S3FaultProxy::start(s3.addr()).unwrap();
    let direct = store(&s3.endpoint_url(), &bucket, 0, Duration::from_secs(30));
    Setup {
        proxy,
        direct,
        bucket,
    }
}

fn store(endpoint: &str, bucket: &str, retries: usize, timeout: Duration) -> Arc<dyn ObjectStore> {
    let s3 = S3Server::shared();
    let retry = RetryConfig {
        max_retries: retries,
        retry_timeout: Duration::from_secs(30),
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
            base: 2.0,
        },
    };
    Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(endpoint)
            .with_allow_http(true)
            .with_region(s3.region())
            .with_bucket_name(bucket)
            .with_access_key_id(s3.access_key_id())
            .with_secret_access_key(s3.secret_access_key())
            .with_retry(retry)
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(true)
                    .with_timeout(timeout),
            )
            .build()
            .unwrap(),
    )
}

impl Setup {
    fn client(&self, retries: usize) -> Arc<dyn ObjectStore> {
        store(
            &self.proxy.endpoint_url(),
            &self.bucket,
            retries,
            Duration::from_secs(30),
        )
    }
}

fn create() -> PutOptions {
    PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    }
}

async fn exists(st: &Arc<dyn ObjectStore>, p: &Path) -> bool {
    match st.head(p).await {
        Ok(_) => true,
        Err(object_store::Error::NotFound { .. }) => false,
        Err(e) => panic!("{e}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_requests_pass_through_unchanged() {
    let s = setup();
    let st = s.client(0);
    let p = Path::from("a/b.bin");
    st.put_opts(&p, PutPayload::from_static(b"hello world"), create())
        .await
        .unwrap();
    assert_eq!(st.get_range(&p, 6..11).await.unwrap(), &b"world"[..]);
    assert_eq!(
        s.direct.get(&p).await.unwrap().bytes().await.unwrap(),
        &b"hello world"[..]
    );
    let seen: Vec<(String, Option<u16>)> = s
        .proxy
        .exchanges()
        .into_iter()
        .map(|e| (e.method, e.upstream_status))
        .collect();
    assert_eq!(seen, [("PUT".into(), Some(200)), ("GET".into(), Some(206))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_and_throttling_are_answered_without_forwarding() {
    let s = setup();
    let p = Path::from("x");
    for (fault, status) in [
        (S3Fault::Status(500), 500),
        (S3Fault::Status(503), 503),
        (S3Fault::SlowDown, 503),
    ] {
        s.proxy.add(S3FaultRule::new(fault).method("PUT"));
        let err = s
            .client(0)
            .put(&p, PutPayload::from_static(b"1"))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains(&status.to_string()),
            "{fault:?}: {err}"
        );
        assert!(!exists(&s.direct, &p).await, "{fault:?} was forwarded");
    }
    let log = s.proxy.exchanges();
    assert!(log.iter().all(|e| e.upstream_status.is_none()));
    // The throttling answer is S3's.
    s.proxy.add(S3FaultRule::new(S3Fault::SlowDown));
    let err = s.client(0).get(&p).await.unwrap_err().to_string();
    assert!(
        err.contains("SlowDown") && err.contains("Please reduce your request rate"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_retries_gets_through_a_burst_of_throttling() {
    let s = setup();
    let p = Path::from("retried");
    s.proxy
        .add(S3FaultRule::new(S3Fault::SlowDown).method("PUT").times(2));
    s.client(3)
        .put(&p, PutPayload::from_static(b"1"))
        .await
        .unwrap();
    let faults: Vec<Option<S3Fault>> = s.proxy.exchanges().iter().map(|e| e.fault).collect();
    assert_eq!(
        faults,
        [Some(S3Fault::SlowDown), Some(S3Fault::SlowDown), None]
    );
    assert!(exists(&s.direct, &p).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delay_past_the_client_timeout_fails_the_call_after_the_server_acted() {
    let s = setup();
    let p = Path::from("slow");
    s.proxy
        .add(S3FaultRule::new(S3Fault::Delay(Duration::from_secs(3))).method("PUT"));
    let st = store(
        &s.proxy.endpoint_url(),
        &s.bucket,
        0,
        Duration::from_millis(500),
    );
    let err = st.put(&p, PutPayload::from_static(b"1")).await.unwrap_err();
    let debug = format!("{err:?}");
    assert!(
        debug.contains("TimedOut") || debug.contains("Timeout"),
        "not a timeout: {debug}"
    );
    // The client gave up on its own clock; the proxy logs the exchange once the server has
    // answered (the first write to a bucket can outlast the client's timeout).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while s
        .proxy
        .exchanges()
        .first()
        .and_then(|e| e.upstream_status)
        .is_none()
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the PUT never reached the server"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(s.proxy.exchanges()[0].upstream_status, Some(200));
    assert!(
        exists(&s.direct, &p).await,
        "the PUT reached the server before the delay"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_whose_reply_is_lost_wrote_the_object() {
    let s = setup();
    let p = Path::from("lost-reply");
    s.proxy
        .add(S3FaultRule::new(S3Fault::DropReply).method("PUT"));
    let err = s
        .client(0)
        .put_opts(&p, PutPayload::from_static(b"mine"), create())
        .await;
    assert!(err.is_err());
    assert_eq!(
        s.direct.get(&p).await.unwrap().bytes().await.unwrap(),
        &b"mine"[..]
    );

    // The hazard this fault exists to expose: a client that retries a create-if-absent whose
    // reply was lost is told AlreadyExists about its own object.
    let q = Path::from("lost-reply-retried");
    s.proxy
        .add(S3FaultRule::new(S3Fault::DropReply).method("PUT"));
    let retried = s
        .client(3)
        .put_opts(&q, PutPayload::from_static(b"mine"), create())
        .await;
    assert!(
        matches!(retried, Err(object_store::Error::AlreadyExists { .. })),
        "{retried:?}"
    );
    assert_eq!(
        s.direct.get(&q).await.unwrap().bytes().await.unwrap(),
        &b"mine"[..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_ranged_read_is_an_error_not_short_data() {
    let s = setup();
    let p = Path::from("ranged");
    let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    s.direct
        .put(&p, PutPayload::from(data.clone()))
        .await
        .unwrap();
    s.proxy
        .add(S3FaultRule::new(S3Fault::TruncateBody).ranged());
    let got = s.client(0).get_range(&p, 1_000..51_000).await;
    assert!(
        got.is_err(),
        "a truncated body was accepted: {} bytes",
        got.unwrap().len()
    );
    let log = s.proxy.exchanges();
    assert_eq!(log[0].range.as_deref(), Some("bytes=1000-50999"));
    assert_eq!(log[0].fault, Some(S3Fault::TruncateBody));
    // Unranged reads did not match the rule; the next ranged one is whole again.
    assert_eq!(
        s.client(0).get(&p).await.unwrap().bytes().await.unwrap(),
        data
    );
    assert_eq!(
        s.client(0).get_range(&p, 10..20).await.unwrap(),
        data[10..20]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_skip_count_and_match_paths() {
    let s = setup();
    s.proxy.add(
        S3FaultRule::new(S3Fault::Reset)
            .path_contains("/metadata/")
            .skip(1)
            .times(2),
    );
    let st = s.client(0);
    let put = |k: &'static str| {
        let st = st.clone();
        async move { st.put(&Path::from(k), PutPayload::from_static(b"1")).await }
    };
    assert!(put("t/data/1").await.is_ok()); // path does not match
    assert!(put("t/metadata/1").await.is_ok()); // skipped
    assert!(put("t/metadata/2").await.is_err());
    assert!(put("t/metadata/3").await.is_err());
    assert!(put("t/metadata/4").await.is_ok()); // spent
    assert_eq!(s.proxy.faults_applied(), 2);
    assert!(!exists(&s.direct, &Path::from("t/metadata/2")).await);
}
