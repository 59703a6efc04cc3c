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

use std::sync::LazyLock;

/// Entries of each table: 7 + 7 bits of index.
const ENTRIES: usize = 1 << 14;

struct Tables {
    /// `encode[x7 << 7 | y7]`, lane `s`: `index14 | next_state << 14`.
    encode: Box<[u64; ENTRIES]>,
    /// `decode[index14]`, lane `s`: `x7 | y7 << 7 | next_state << 14`.
    decode: Box<[u64; ENTRIES]>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(build);

/// Runs 7 levels of `xy2d` from `state`; returns the 14 index bits and the outgoing state.
fn walk(xt: u64, yt: u64, mut state: u64) -> (u64, u64) {
    let mut index = 0;
    for level in (0..7).rev() {
        let (mut bx, mut by) = ((xt >> level) & 1, (yt >> level) & 1);
        if state & 2 != 0 {
            bx ^= 1;
            by ^= 1;
        }
        if state & 1 != 0 {
            std::mem::swap(&mut bx, &mut by);
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

fn build() -> Tables {
    let mut encode: Box<[u64; ENTRIES]> = vec![0; ENTRIES].try_into().unwrap();
    let mut decode: Box<[u64; ENTRIES]> = vec![0; ENTRIES].try_into().unwrap();
    for xt in 0..128u64 {
        for yt in 0..128u64 {
            for state in 0..4u64 {
                let (index, next) = walk(xt, yt, state);
                encode[(xt << 7 | yt) as usize] |= (index | next << 14) << (16 * state);
                decode[index as usize] |= (xt | yt << 7 | next << 14) << (16 * state);
            }
        }
    }
    Tables { encode, decode }
}

/// Start state for a 35-bit walk: each of the three zero levels on top swaps the axes, so
/// starting swapped leaves the 32 real levels in the identity state.
const PADDED_START: u64 = 1;

/// Hilbert key of 32-bit cells on the full `2^32 × 2^32` grid.
#[inline(always)]
pub(crate) fn encode32(x: u32, y: u32) -> u64 {
    encode32_with(&TABLES.encode, x, y)
}

/// The encode table, to hoist the lazy initialisation out of a loop.
#[inline]
pub(crate) fn encode_table() -> &'static [u64; ENTRIES] {
    &TABLES.encode
}

#[inline(always)]
pub(crate) fn encode32_with(table: &[u64; ENTRIES], x: u32, y: u32) -> u64 {
    let (x, y) = (u64::from(x), u64::from(y));
    let tile = |shift: u32| table[(((x >> shift) & 0x7f) << 7 | ((y >> shift) & 0x7f)) as usize];
    // Independent loads first; the state chain is only shift-and-mask.
    let entries = [tile(28), tile(21), tile(14), tile(7), tile(0)];
    let mut state = PADDED_START;
    let mut key = 0u64;
    for entry in entries {
        let lane = (entry >> (state * 16)) & 0xffff;
        key = (key << 14) | (lane & 0x3fff);
        state = lane >> 14;
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
