//! Scalar Hilbert kernel: a lookup table that handles 7 bits per axis per step.
//!
//! The curve is the classic `xy2d` (Wikipedia's algorithm, DuckDB's `ST_Hilbert`). Its state at
//! each level is one of four transforms of the remaining coordinates: identity, swap, flip both,
//! or swap and flip (they commute, so a state is two bits). The table is indexed by 7 bits of x
//! and 7 bits of y only, and each 64-bit entry holds, for each of the four incoming states, a
//! 16-bit lane with the 14 index bits and the outgoing state (the HilbertSFC layout). The five
//! loads for a 32-bit key therefore do not wait on one another: only the lane selection depends
//! on the previous step. 32 bits are padded to 35 with three zero levels on top, which emit zero
//! digits and swap the axes once each; starting in the swapped state cancels that, so the same
//! table serves the whole key.

/// Entries of each table: 7 + 7 bits of index.
pub(crate) const ENTRIES: usize = 1 << 14;

/// Both tables, built at compile time (256 KB of read-only data): a `static` needs no lazy
/// initialisation check on every call, and its address is a constant.
struct Tables {
    /// `encode[x7 << 7 | y7]`, lane `s`: `index14 | next_state << 14`.
    encode: [u64; ENTRIES],
    /// `decode[index14]`, lane `s`: `x7 | y7 << 7 | next_state << 14`.
    decode: [u64; ENTRIES],
}

static TABLES: Tables = build();

/// Runs 7 levels of `xy2d` from `state`; returns the 14 index bits and the outgoing state.
const fn walk(xt: u64, yt: u64, mut state: u64) -> (u64, u64) {
    let mut index = 0;
    let mut level = 7;
    while level > 0 {
        level -= 1;
        let (mut bx, mut by) = ((xt >> level) & 1, (yt >> level) & 1);
        if state & 2 != 0 {
            bx ^= 1;
            by ^= 1;
        }
        if state & 1 != 0 {
            (bx, by) = (by, bx);
        }
        index = (index << 2) | ((3 * bx) ^ by);
        if by == 0 {
            if bx == 1 {
                state ^= 2;
            }
            state ^= 1;
        }
    }
    (index, state)
}

const fn build() -> Tables {
    let mut tables = Tables {
        encode: [0; ENTRIES],
        decode: [0; ENTRIES],
    };
    let mut xt = 0;
    while xt < 128 {
        let mut yt = 0;
        while yt < 128 {
            let mut state = 0;
            while state < 4 {
                let (index, next) = walk(xt, yt, state);
                tables.encode[(xt << 7 | yt) as usize] |= (index | next << 14) << (16 * state);
                tables.decode[index as usize] |= (xt | yt << 7 | next << 14) << (16 * state);
                state += 1;
            }
            yt += 1;
        }
        xt += 1;
    }
    tables
}

/// Start state for a 35-bit walk: each of the three zero levels on top swaps the axes, so
/// starting swapped leaves the 32 real levels in the identity state.
const PADDED_START: u64 = 1;

/// Hilbert key of 32-bit cells on the full `2^32 × 2^32` grid.
#[inline(always)]
pub(crate) fn encode32(x: u32, y: u32) -> u64 {
    encode32_with(encode_table(), x, y)
}

/// The encode table.
#[inline(always)]
pub(crate) fn encode_table() -> &'static [u64; ENTRIES] {
    &TABLES.encode
}

#[inline(always)]
pub(crate) fn encode32_with(table: &[u64; ENTRIES], x: u32, y: u32) -> u64 {
    let (x, y) = (u64::from(x), u64::from(y));
    let tile = |shift: u32| table[(((x >> shift) & 0x7f) << 7 | ((y >> shift) & 0x7f)) as usize];
    chain([tile(28), tile(21), tile(14), tile(7), tile(0)])
}

/// Mask that `pdep` spreads the low 28 bits of y with, so that the 7-bit tiles of y land at bits
/// `14k..14k+7` and, with x spread by `SPREAD_Y << 7`, `spread >> 14k & 0x3fff` is the table
/// index of tile `k` (counted from the least significant end). The top 4 bits are indexed
/// directly.
pub(crate) const SPREAD_Y: u64 = 0x7f | 0x7f << 14 | 0x7f << 28 | 0x7f << 42;

/// [`encode32`] from the table indices of the four low tiles pre-spread into one word (see
/// [`SPREAD_Y`]; BMI2 `pdep` computes it in two instructions) and the raw cells for the top tile.
#[inline(always)]
pub(crate) fn encode32_spread(x: u32, y: u32, spread: u64) -> u64 {
    let table = &TABLES.encode;
    let tile = |k: u32| table[((spread >> (14 * k)) & 0x3fff) as usize];
    let top = table[((x >> 28) << 7 | (y >> 28)) as usize];
    chain([top, tile(3), tile(2), tile(1), tile(0)])
}

/// The state chain over five table entries, most significant first. Independent loads come
/// first; the chain is only a shift and a mask a step. It carries `16 * state`, the lane offset.
#[inline(always)]
fn chain(entries: [u64; 5]) -> u64 {
    let mut offset = 16 * PADDED_START;
    let mut key = 0u64;
    for entry in entries {
        let lane = entry >> offset;
        key = (key << 14) | (lane & 0x3fff);
        offset = (lane >> 10) & 0x30;
    }
    key
}

/// Inverse of [`encode32`].
#[inline]
pub(crate) fn decode32(key: u64) -> (u32, u32) {
    let table = &TABLES.decode;
    let (mut x, mut y, mut state) = (0u64, 0u64, PADDED_START);
    for shift in [56u32, 42, 28, 14, 0] {
        let entry = table[((key >> shift) & 0x3fff) as usize];
        let lane = (entry >> (state * 16)) & 0xffff;
        x = (x << 7) | (lane & 0x7f);
        y = (y << 7) | ((lane >> 7) & 0x7f);
        state = lane >> 14;
    }
    (x as u32, y as u32)
}
