//! The `deletion-vector-v1` blob (Puffin spec, "Blob types"): a big-endian length of magic +
//! bitmap, the magic `D1 D3 39 64`, the 64-bit Roaring bitmap in the portable format, and a
//! big-endian CRC-32 of magic + bitmap.
//!
//! The portable 64-bit format (RoaringFormatSpec, "Extension for 64-bit implementations") is an
//! 8-byte little-endian count of buckets, then per bucket, in ascending unsigned key order, a
//! 4-byte little-endian key and a 32-bit Roaring bitmap in its standard serialization.
//!
//! `roaring::RoaringTreemap::serialize_into` writes exactly that layout, but this crate frames
//! the buckets itself around `RoaringBitmap`'s (de)serialization, for two reasons:
//! - its reader accepts unsorted and duplicate keys, and a duplicate silently replaces the
//!   earlier bucket (deleted rows would come back); the spec orders keys, and Java rejects both;
//! - the writer run-length encodes each bucket first (`RoaringBitmap::optimize`), as Java's
//!   `BitmapPositionDeleteIndex.serialize` does (`runLengthEncode`): dense deletes store as
//!   runs, and the bytes equal Java's (its golden files are in this crate's tests).

use roaring::RoaringBitmap;

use crate::deletion_vector::MAX_KEY;
use crate::{DeletionVector, ErrorKind, Result};

/// Magic of a `deletion-vector-v1` blob, after its length field.
pub const DELETION_VECTOR_MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];

/// Bytes of the blob around the bitmap: length (4), magic (4), CRC (4).
const FRAMING_BYTES: usize = 12;
/// An empty bitmap is its 8-byte bucket count.
const MIN_BLOB_BYTES: usize = FRAMING_BYTES + 8;
/// Java refuses to serialize an index whose blob would exceed `Integer.MAX_VALUE` bytes.
const MAX_BLOB_BYTES: u64 = i32::MAX as u64;

impl DeletionVector {
    /// The vector as the bare portable 64-bit Roaring serialization (no length, magic or CRC).
    pub fn to_portable_bitmap(&self) -> Vec<u8> {
        let optimized: Vec<(u32, RoaringBitmap)> = self
            .buckets()
            .iter()
            .map(|(&key, bitmap)| {
                let mut b = bitmap.clone();
                b.optimize();
                (key, b)
            })
            .collect();
        let size = 8 + optimized
            .iter()
            .map(|(_, b)| 4 + b.serialized_size())
            .sum::<usize>();
        let mut out = Vec::with_capacity(size);
        write_portable(&mut out, &optimized);
        out
    }

    /// A vector from the bare portable 64-bit Roaring serialization, which must fill `bytes`
    /// exactly. Keys must ascend and stay at or below Java's largest key (`i32::MAX - 1`).
    pub fn from_portable_bitmap(bytes: &[u8]) -> Result<DeletionVector> {
        let corrupt = |reason: String| ErrorKind::DeletionVectorBitmap { reason };
        let (count, mut rest) = bytes
            .split_first_chunk::<8>()
            .map(|(c, rest)| (u64::from_le_bytes(*c), rest))
            .ok_or_else(|| {
                corrupt(format!(
                    "{} bytes cannot hold the 8-byte bucket count",
                    bytes.len()
                ))
            })?;
        // Each bucket takes at least 12 bytes (key, cookie, container count): a count beyond
        // that is corrupt, and checking first keeps a bad count from driving a long loop.
        if count > (rest.len() / 12) as u64 {
            return Err(corrupt(format!(
                "the bucket count is {count}, but {} bytes hold at most {}",
                rest.len(),
                rest.len() / 12
            ))
            .into());
        }
        let mut buckets = Vec::with_capacity(count as usize);
        let mut previous: Option<u32> = None;
        for i in 0..count {
            let (key, after) = rest.split_first_chunk::<4>().ok_or_else(|| {
                corrupt(format!(
                    "bucket {i} of {count}: the data ends before its key"
                ))
            })?;
            let key = u32::from_le_bytes(*key);
            if previous.is_some_and(|p| key <= p) {
                return Err(corrupt(format!(
                    "bucket {i} has key {key} after key {}: keys must be strictly ascending",
                    previous.unwrap_or_default()
                ))
                .into());
            }
            if key > MAX_KEY {
                return Err(corrupt(format!(
                    "bucket {i} has key {key} (positions from {}), past the largest key {MAX_KEY} \
                     (positions must stay below 2^63, and Iceberg Java reads keys up to {MAX_KEY})",
                    u64::from(key) << 32
                ))
                .into());
            }
            rest = after;
            let bitmap = RoaringBitmap::deserialize_from(&mut rest).map_err(|e| {
                corrupt(format!(
                    "bucket {i} (key {key}): its 32-bit Roaring bitmap does not decode: {e}"
                ))
            })?;
            buckets.push((key, bitmap));
            previous = Some(key);
        }
        if !rest.is_empty() {
            return Err(corrupt(format!(
                "{} bytes follow the last of the {count} buckets",
                rest.len()
            ))
            .into());
        }
        Ok(DeletionVector::from_buckets(buckets))
    }

    /// The vector as a `deletion-vector-v1` blob. Fails only for a vector whose blob would be
    /// larger than 2 GiB (Java's limit).
    pub fn to_blob(&self) -> Result<Vec<u8>> {
        let bitmap = self.to_portable_bitmap();
        let total = (bitmap.len() + FRAMING_BYTES) as u64;
        if total > MAX_BLOB_BYTES {
            return Err(ErrorKind::TooLarge {
                what: "deletion vector blob",
                bytes: total,
                max: MAX_BLOB_BYTES,
            }
            .into());
        }
        let mut out = Vec::with_capacity(total as usize);
        out.extend(((bitmap.len() + 4) as u32).to_be_bytes());
        out.extend(DELETION_VECTOR_MAGIC);
        out.extend(&bitmap);
        let crc = crc32fast::hash(&out[4..]);
        out.extend(crc.to_be_bytes());
        Ok(out)
    }

    /// A vector from a `deletion-vector-v1` blob: the bytes at a manifest entry's
    /// `content_offset`, `content_size_in_bytes` bytes long. Checks, in order: size, length
    /// field, magic, CRC-32, then the bitmap itself.
    pub fn from_blob(blob: &[u8]) -> Result<DeletionVector> {
        if blob.len() < MIN_BLOB_BYTES {
            return Err(ErrorKind::DeletionVectorTooSmall { length: blob.len() }.into());
        }
        let (length, rest) = blob.split_first_chunk::<4>().expect("blob has 20 bytes");
        let declared = u32::from_be_bytes(*length);
        let available = (blob.len() - 8) as u64;
        if u64::from(declared) != available {
            return Err(ErrorKind::DeletionVectorLength {
                declared,
                available,
            }
            .into());
        }
        let (data, crc) = rest.split_last_chunk::<4>().expect("blob has 20 bytes");
        let magic: [u8; 4] = data[..4].try_into().expect("data has the 4 magic bytes");
        if magic != DELETION_VECTOR_MAGIC {
            return Err(ErrorKind::DeletionVectorMagic { found: magic }.into());
        }
        let stored = u32::from_be_bytes(*crc);
        let computed = crc32fast::hash(data);
        if stored != computed {
            return Err(ErrorKind::DeletionVectorCrc { stored, computed }.into());
        }
        DeletionVector::from_portable_bitmap(&data[4..])
    }
}

fn write_portable(out: &mut Vec<u8>, buckets: &[(u32, RoaringBitmap)]) {
    out.extend((buckets.len() as u64).to_le_bytes());
    for (key, bitmap) in buckets {
        out.extend(key.to_le_bytes());
        bitmap
            .serialize_into(&mut *out)
            .expect("writing to a Vec cannot fail");
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn hex(found: &[u8]) -> String {
        crate::error::Hex(found).to_string()
    }

    fn blob(positions: &[u64]) -> Vec<u8> {
        DeletionVector::from_positions(positions.iter().copied())
            .unwrap()
            .to_blob()
            .unwrap()
    }

    #[test]
    fn framing_is_length_magic_bitmap_crc() {
        let b = blob(&[1, 3]);
        let len = u32::from_be_bytes(b[..4].try_into().unwrap()) as usize;
        assert_eq!(len + 8, b.len());
        assert_eq!(b[4..8], DELETION_VECTOR_MAGIC);
        let crc = u32::from_be_bytes(b[b.len() - 4..].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&b[4..b.len() - 4]));
        // One bucket, key 0.
        assert_eq!(b[8..16], 1u64.to_le_bytes());
        assert_eq!(b[16..20], 0u32.to_le_bytes());
    }

    #[test]
    fn every_corruption_is_named() {
        let good = blob(&[1, 3, 1 << 33]);
        let kind = |b: &[u8]| DeletionVector::from_blob(b).unwrap_err();

        let e = kind(&good[..19]);
        assert!(matches!(
            e.kind(),
            ErrorKind::DeletionVectorTooSmall { length: 19 }
        ));

        let mut b = good.clone();
        b[4] = 0;
        let e = kind(&b);
        assert!(matches!(e.kind(), ErrorKind::DeletionVectorMagic { .. }));
        assert!(
            e.to_string()
                .starts_with("Magic bytes mismatch, deletion vector is corrupt")
        );
        assert!(e.to_string().contains(&hex(&b[4..8])), "{e}");

        let mut b = good.clone();
        *b.last_mut().unwrap() ^= 1;
        assert!(matches!(
            kind(&b).kind(),
            ErrorKind::DeletionVectorCrc { .. }
        ));

        let mut b = good.clone();
        b[20] ^= 0x40;
        assert!(matches!(
            kind(&b).kind(),
            ErrorKind::DeletionVectorCrc { .. }
        ));

        let e = kind(&good[..good.len() - 1]);
        assert!(
            matches!(e.kind(), ErrorKind::DeletionVectorLength { .. }),
            "{e}"
        );
        let mut longer = good.clone();
        longer.push(0);
        assert!(matches!(
            kind(&longer).kind(),
            ErrorKind::DeletionVectorLength { .. }
        ));
    }

    #[test]
    fn bad_bitmaps_are_named_even_with_a_good_crc() {
        // Re-frame a portable bitmap with a correct length and CRC.
        let frame = |bitmap: &[u8]| {
            let mut out = ((bitmap.len() + 4) as u32).to_be_bytes().to_vec();
            out.extend(DELETION_VECTOR_MAGIC);
            out.extend(bitmap);
            let crc = crc32fast::hash(&out[4..]);
            out.extend(crc.to_be_bytes());
            out
        };
        let one = |key: u32, values: &[u32]| {
            let mut v = key.to_le_bytes().to_vec();
            RoaringBitmap::from_iter(values.iter().copied())
                .serialize_into(&mut v)
                .unwrap();
            v
        };
        let reason = |bitmap: Vec<u8>| match DeletionVector::from_blob(&frame(&bitmap))
            .unwrap_err()
            .kind()
        {
            ErrorKind::DeletionVectorBitmap { reason } => reason.clone(),
            other => panic!("{other}"),
        };
        // Duplicate keys: RoaringTreemap would keep only the second bucket.
        let mut dup = 2u64.to_le_bytes().to_vec();
        dup.extend(one(7, &[1]));
        dup.extend(one(7, &[2]));
        assert!(reason(dup).contains("strictly ascending"));
        // Descending keys.
        let mut desc = 2u64.to_le_bytes().to_vec();
        desc.extend(one(8, &[1]));
        desc.extend(one(7, &[2]));
        assert!(reason(desc).contains("strictly ascending"));
        // A key with the sign bit set (position >= 2^63).
        let mut high = 1u64.to_le_bytes().to_vec();
        high.extend(one(0x8000_0000, &[1]));
        assert!(reason(high).contains("largest key"));
        // A count larger than the bytes can hold.
        let mut count = 1000u64.to_le_bytes().to_vec();
        count.extend(one(0, &[1]));
        assert!(reason(count).contains("bucket count is 1000"));
        // Trailing bytes after the last bucket.
        let mut trailing = 1u64.to_le_bytes().to_vec();
        trailing.extend(one(0, &[1]));
        trailing.extend([0, 0, 0, 0]);
        assert!(reason(trailing).contains("follow the last"));
        // A truncated bucket.
        let mut cut = 1u64.to_le_bytes().to_vec();
        cut.extend(one(0, &(0..100).collect::<Vec<_>>()));
        cut.truncate(cut.len() - 3);
        cut.extend([0; 0]);
        let r = reason(cut);
        assert!(
            r.contains("bucket 0 (key 0)") || r.contains("bucket count"),
            "{r}"
        );
    }

    #[test]
    fn empty_buckets_from_java_gaps_are_dropped() {
        // Java writes every key from 0 to the largest, empty ones included.
        let mut bitmap = 2u64.to_le_bytes().to_vec();
        bitmap.extend(0u32.to_le_bytes());
        RoaringBitmap::new().serialize_into(&mut bitmap).unwrap();
        bitmap.extend(1u32.to_le_bytes());
        RoaringBitmap::from_iter([5u32])
            .serialize_into(&mut bitmap)
            .unwrap();
        let v = DeletionVector::from_portable_bitmap(&bitmap).unwrap();
        assert_eq!(v, DeletionVector::from_positions([(1 << 32) + 5]).unwrap());
        assert_eq!(v.iter().collect::<Vec<_>>(), vec![(1u64 << 32) + 5]);
    }

    #[test]
    fn the_writer_refuses_nothing_a_reader_refuses() {
        let v = DeletionVector::from_positions([crate::MAX_POSITION, 0]).unwrap();
        let back = DeletionVector::from_blob(&v.to_blob().unwrap()).unwrap();
        assert_eq!(back, v);
        let mut sink = Vec::new();
        sink.write_all(&v.to_portable_bitmap()).unwrap();
        assert_eq!(DeletionVector::from_portable_bitmap(&sink).unwrap(), v);
    }
}
