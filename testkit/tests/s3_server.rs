//! The S3 harness against `object_store` (the client geoberg uses): what geoberg relies on
//! works, credentials are verified, and the server is gone after drop.

use std::net::TcpStream;
use std::sync::Arc;

use futures::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, WriteMultipart};

use geoberg_testkit::{S3_BUCKET, S3Server};

fn store(s3: &S3Server, bucket: &str, secret: &str) -> Arc<dyn ObjectStore> {
    Arc::new(
        AmazonS3Builder::new()
            .with_endpoint(s3.endpoint_url())
            .with_allow_http(true)
            .with_region(s3.region())
            .with_bucket_name(bucket)
            .with_access_key_id(s3.access_key_id())
            .with_secret_access_key(secret)
            .build()
            .unwrap(),
    )
}

fn create() -> PutOptions {
    PutOptions {
        mode: PutMode::Create,
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_geoberg_relies_on_works_and_signatures_are_verified() {
    let s3 = S3Server::shared();
    let env: Vec<&str> = s3.env().iter().map(|(k, _)| *k).collect::<Vec<_>>();
    assert_eq!(
        env,
        [
            "AWS_ENDPOINT_URL",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_REGION",
            "AWS_ALLOW_HTTP"
        ]
    );
    let bucket = s3.fresh_bucket().unwrap();
    let st = store(s3, &bucket, s3.secret_access_key());
    let data: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let p = Path::from("wh/t/data/a.parquet");

    // Conditional create: the second create of a key is AlreadyExists, the object unchanged.
    st.put_opts(&p, PutPayload::from(data.clone()), create())
        .await
        .unwrap();
    let again = st.put_opts(&p, PutPayload::from(vec![0u8]), create()).await;
    assert!(
        matches!(again, Err(object_store::Error::AlreadyExists { .. })),
        "{again:?}"
    );
    assert_eq!(st.get(&p).await.unwrap().bytes().await.unwrap(), data);

    // Ranged reads, several ranges at once.
    assert_eq!(st.get_range(&p, 100..200).await.unwrap(), data[100..200]);
    let parts = st.get_ranges(&p, &[0..8, 9_990..10_000]).await.unwrap();
    assert_eq!((&parts[0][..], &parts[1][..]), (&data[..8], &data[9_990..]));

    // Multipart upload (3 parts of 5 MiB and a tail).
    let big: Vec<u8> = (0..16 * 1024 * 1024 + 17u32)
        .map(|i| (i % 251) as u8)
        .collect();
    let mp = Path::from("wh/t/data/big.parquet");
    let mut w = WriteMultipart::new_with_chunk_size(st.put_multipart(&mp).await.unwrap(), 5 << 20);
    w.write(&big);
    w.finish().await.unwrap();
    assert_eq!(st.get(&mp).await.unwrap().bytes().await.unwrap(), big);
    assert_eq!(
        st.get_range(&mp, 5_242_870..5_242_890).await.unwrap(),
        big[5_242_870..5_242_890]
    );

    // Listing by prefix (not a sibling with the same leading characters), then delete.
    st.put(&Path::from("wh/tt/x"), PutPayload::from_static(b"x"))
        .await
        .unwrap();
    let mut listed: Vec<String> = st
        .list(Some(&Path::from("wh/t")))
        .map_ok(|m| m.location.to_string())
        .try_collect()
        .await
        .unwrap();
    listed.sort();
    assert_eq!(listed, ["wh/t/data/a.parquet", "wh/t/data/big.parquet"]);
    st.delete(&p).await.unwrap();
    assert!(matches!(
        st.head(&p).await,
        Err(object_store::Error::NotFound { .. })
    ));

    // A wrong secret is refused: the server checks SigV4 signatures.
    let wrong = store(s3, &bucket, "not-the-secret");
    let denied = wrong.get(&mp).await;
    assert!(
        matches!(denied, Err(object_store::Error::PermissionDenied { .. })),
        "{denied:?}"
    );

    // The bucket created at start exists too.
    let default = store(s3, S3_BUCKET, s3.secret_access_key());
    default
        .put(&Path::from("k"), PutPayload::from_static(b"1"))
        .await
        .unwrap();
}

#[test]
fn is_gone_after_drop() {
    let s3 = S3Server::start();
    let addr = s3.addr();
    assert!(TcpStream::connect(addr).is_ok());
    drop(s3);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after drop"
    );
}
