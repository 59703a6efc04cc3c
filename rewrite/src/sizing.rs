//! How many output files a partition gets (Iceberg's `SizeBasedFileRewritePlanner` rules plus the
//! automatic size of CREATE SPATIAL INDEX).

use crate::RewriteOptions;

/// Without explicit sizing a partition aims for at least this many files ...
const AUTO_FILES_PER_PARTITION: u64 = 64;
/// ... as long as files stay at least this large (small files cost per-file overhead) ...
const AUTO_MIN_FILE_SIZE_BYTES: u64 = 8 * 1024 * 1024;
/// ... but a partition too small for that still gets up to this many files, so that a window
/// over a small table skips some (seed 000's first example) ...
const SMALL_PARTITION_FILES: u64 = 4;
/// ... of at least this size.
const SMALL_MIN_FILE_SIZE_BYTES: u64 = 256 * 1024;

/// Target output size of a partition of `bytes` (already scaled by the compression factor).
///
/// With explicit `target-file-size-bytes` (or `target-file-count`) that is used. Otherwise the
/// planner balances size against count: spatial filters read about `(s + 1/√N)²` of N files, so
/// a partition gets up to 64 files while each stays ≥ 8 MiB, never above the table's target; a
/// partition under 32 MiB gets up to 4 files of ≥ 256 KiB (a 2 MB table: four files, a 1%
/// window reads one or two of them).
pub(crate) fn partition_target_size(options: &RewriteOptions, bytes: u64) -> u64 {
    if options.explicit_sizing {
        return options.target_file_size_bytes;
    }
    let target = (bytes / AUTO_FILES_PER_PARTITION)
        .max(AUTO_MIN_FILE_SIZE_BYTES)
        .min(options.target_file_size_bytes);
    if bytes / target >= SMALL_PARTITION_FILES {
        return target;
    }
    (bytes / SMALL_PARTITION_FILES)
        .max(SMALL_MIN_FILE_SIZE_BYTES)
        .min(target)
}

/// Iceberg's `expectedOutputFiles`: ceil when the remainder is worth a file of its own, floor when
/// spreading the remainder keeps files below `min(1.1 × target, write max)`.
pub(crate) fn expected_output_files(
    bytes: u64,
    target: u64,
    min_file_size: u64,
    write_max: u64,
) -> usize {
    if bytes < target {
        return 1;
    }
    let floor = bytes / target;
    let remainder = bytes % target;
    if remainder == 0 {
        return floor as usize;
    }
    if remainder > min_file_size {
        return floor as usize + 1;
    }
    let avg_with_floor = bytes / floor;
    let limit = ((target as f64 * 1.1) as u64).min(write_max);
    if avg_with_floor < limit {
        floor as usize
    } else {
        floor as usize + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB: u64 = 1_000_000_000;

    #[test]
    fn iceberg_example_ten_point_one_gb() {
        // 10.1 GB at a 1 GB target (min 0.75, write max 1.4) gives 10 files.
        assert_eq!(
            expected_output_files(10 * GB + GB / 10, GB, 750_000_000, 1_400_000_000),
            10
        );
        // A remainder above min-file-size gets its own file.
        assert_eq!(
            expected_output_files(10 * GB + 800_000_000, GB, 750_000_000, 1_400_000_000),
            11
        );
        assert_eq!(expected_output_files(5, GB, 750_000_000, 1_400_000_000), 1);
    }

    #[test]
    fn automatic_size_balances_count_and_size() {
        const MIB: u64 = 1024 * 1024;
        let o = RewriteOptions::default();
        let files = |bytes: u64| {
            let target = partition_target_size(&o, bytes);
            expected_output_files(bytes, target, target * 3 / 4, o.write_max_file_size())
        };
        // A small table still gets a few files; a tiny one, one.
        assert_eq!(partition_target_size(&o, 10 * MIB), 10 * MIB / 4);
        assert_eq!(files(10 * MIB), 4);
        assert_eq!(files(2 * MIB), 4);
        assert_eq!(files(MIB / 2), 2);
        assert_eq!(files(MIB / 8), 1);
        // Then files of at least 8 MiB, up to 64 of them, never above the target.
        assert_eq!(partition_target_size(&o, 128 * MIB), 8 * MIB);
        assert_eq!(files(128 * MIB), 16);
        let mid = 64 * 100 * MIB;
        assert_eq!(partition_target_size(&o, mid), 100 * MIB);
        assert_eq!(partition_target_size(&o, 1 << 40), o.target_file_size_bytes);
    }
}
