//! Puffin compression codecs (spec, "Compression codecs"): each a single frame with the content
//! size present. Read only: this crate writes uncompressed footers and blobs, the form every
//! reader accepts (DuckDB and pyiceberg 0.12 refuse compressed footers, Java cannot read LZ4).

use std::io::Read;

use crate::{ErrorKind, Result};

/// A codec of a compressed footer payload or blob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionCodec {
    /// A single LZ4 frame (the only codec of compressed footers).
    Lz4,
    /// A single Zstandard frame.
    Zstd,
}

impl CompressionCodec {
    /// The codec's name in a blob's `compression-codec`.
    pub fn name(self) -> &'static str {
        match self {
            CompressionCodec::Lz4 => "lz4",
            CompressionCodec::Zstd => "zstd",
        }
    }

    /// The codec named `name`; `context` says what it compresses, for the error.
    pub fn parse(name: &str, context: &'static str) -> Result<CompressionCodec> {
        match name {
            "lz4" => Ok(CompressionCodec::Lz4),
            "zstd" => Ok(CompressionCodec::Zstd),
            _ => Err(ErrorKind::UnsupportedCodec {
                codec: name.to_string(),
                context,
            }
            .into()),
        }
    }

    /// Decompresses one frame.
    pub fn decompress(self, data: &[u8], context: &'static str) -> Result<Vec<u8>> {
        let decoded = match self {
            CompressionCodec::Lz4 => {
                let mut out = Vec::new();
                lz4_flex::frame::FrameDecoder::new(data)
                    .read_to_end(&mut out)
                    .map(|_| out)
            }
            CompressionCodec::Zstd => zstd::stream::decode_all(data),
        };
        decoded.map_err(|source| {
            ErrorKind::Decompress {
                codec: self.name(),
                context,
                source,
            }
            .into()
        })
    }
}
