//! Scalar Hilbert kernels built on lookup tables.
//!
//! The curve is the classic `xy2d` (Wikipedia's algorithm, DuckDB's `ST_Hilbert`). Its state at
//! each level is one of four transforms of the remaining coordinates: identity, swap, flip both,
//! or swap and flip. They commute and each undoes itself, so a state is two bits and composing
//! states is XOR.
//!
//! **Encoding** walks the 32 levels as four tiles of 8 bits per axis. Two tables of `2^16`
//! entries, indexed by a tile `x8 << 8 | y8`, and one of 1024 bytes hold everything (193 KB of
//! read-only data):
//!
//! * `next[tile]` packs, for each of the four incoming states, the state after the tile. Each
//!   tile's entry is loaded independently of the others, so the state chain between tiles is
//!   one load a step from the small [`STEP`] table, `STEP[next << 2 | state]` (three steps: the
//!   last tile's outgoing state is not needed).
//! * `digits[tile]` is the 16 key bits of the tile walked from the identity state. A walk from
//!   state `s` on a tile equals the identity walk on the tile transformed by `s` (swap the bytes,
//!   flip all bits), so once the states are known the four digit loads are independent too.
//!
//! The four transformed copies of the four tile indices are 16 `u16`s, built with one byte
//! unpack and one XOR (SSE2 on x86-64, see `arch::hilbert_key`; [`tile_versions`] elsewhere).
//!
//! **Decoding** keeps the earlier layout: a table indexed by 14 key bits whose 64-bit entries
//! hold, for each incoming state, a 16-bit lane with the 7 + 7 cell bits and the outgoing state
//! (the HilbertSFC layout). 32 bits are padded to 35 with three zero levels on top, which emit
//! zero digits and swap the axes once each; starting in the swapped state cancels that.

/// Entries of the decode table: 14 bits of key.
const ENTRIES: usize = 1 << 14;

/// The decode table, built at compile time (128 KB of read-only data) like the encode tables: a
/// `static` needs no lazy initialisation check on every call, and its address is a constant.
struct Tables {
    /// `decode[index14]`, lane `s`: `x7 | y7 << 7 | next_state << 14`.
    decode: [u64; ENTRIES],
}

static TABLES: Tables = build();

/// Runs `levels` levels of `xy2d` from `state` on the low `levels` bits of `xt` and `yt`;
/// returns the `2 * levels` index bits and the outgoing state.
const fn walk(xt: u64, yt: u64, mut state: u64, levels: u32) -> (u64, u64) {
    let mut index = 0;
    let mut level = levels;
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
        decode: [0; ENTRIES],
    };
    let mut xt = 0;
    while xt < 128 {
        let mut yt = 0;
        while yt < 128 {
            let mut state = 0;
            while state < 4 {
                let (index, next) = walk(xt, yt, state, 7);
                tables.decode[index as usize] |= (xt | yt << 7 | next << 14) << (16 * state);
                state += 1;
            }
            yt += 1;
        }
        xt += 1;
    }
    tables
}

/// Start state for a 35-bit decode walk: each of the three zero levels on top swaps the axes,
/// so starting swapped leaves the 32 real levels in the identity state.
const PADDED_START: u64 = 1;

/// Entries of each 8-bit tile table: 8 + 8 bits of index.
pub(crate) const TILE_ENTRIES: usize = 1 << 16;

/// The encode tables (see the module docs).
pub(crate) struct Tiles {
    /// `digits[x8 << 8 | y8]`: the 16 key bits of the tile walked from the identity state.
    pub(crate) digits: [u16; TILE_ENTRIES],
    /// `next[x8 << 8 | y8] >> (2 * s) & 3`: the state after the tile when entered in state `s`.
    pub(crate) next: [u8; TILE_ENTRIES],
}

pub(crate) static TILES: Tiles = build_tiles();

/// A state as a table value: loading an enum tells the compiler its value is below 4, so the
/// state indexes the 16 tile versions with no mask and no bounds check.
#[derive(Clone, Copy)]
#[repr(u8)]
enum State {
    Identity = 0,
    Swap = 1,
    Flip = 2,
    SwapFlip = 3,
}

/// `STEP[next << 2 | s]` is `(next >> (2 * s)) & 3`: the lane of a packed `next` entry for state
/// `s`, as one load instead of a variable shift (which would need `cl` on x86-64 without BMI2).
static STEP: [State; 1024] = build_step();

const fn build_step() -> [State; 1024] {
    let mut step = [State::Identity; 1024];
    let mut i = 0;
    while i < 1024 {
        step[i] = match (i >> 2) >> (2 * (i & 3)) & 3 {
            0 => State::Identity,
            1 => State::Swap,
            2 => State::Flip,
            _ => State::SwapFlip,
        };
        i += 1;
    }
    step
}

/// A tile index transformed by state `s`: bit 0 swaps x and y (the two bytes), bit 1 flips both.
const fn transform(tile: usize, s: usize) -> usize {
    let mut t = tile;
    if s & 1 != 0 {
        t = (t >> 8) | ((t & 0xff) << 8);
    }
    if s & 2 != 0 {
        t ^= 0xffff;
    }
    t
}

const fn build_tiles() -> Tiles {
    let mut tiles = Tiles {
        digits: [0; TILE_ENTRIES],
        next: [0; TILE_ENTRIES],
    };
    let mut out = [0u8; TILE_ENTRIES];
    let mut tile = 0;
    while tile < TILE_ENTRIES {
        let (index, state) = walk((tile >> 8) as u64, (tile & 0xff) as u64, 0, 8);
        tiles.digits[tile] = index as u16;
        out[tile] = state as u8;
        tile += 1;
    }
    tile = 0;
    while tile < TILE_ENTRIES {
        let mut s = 0;
        while s < 4 {
            // Entering in state `s` is the identity walk on the transformed tile, whose outgoing
            // state composes (XOR) with `s`.
            let after = s as u8 ^ out[transform(tile, s)];
            tiles.next[tile] |= after << (2 * s);
            s += 1;
        }
        tile += 1;
    }
    tiles
}

/// The tile indices of `(x, y)` under each state: entry `s * 4 + k` is tile `k` (counted from
/// the least significant byte) transformed by state `s`. Portable twin of the SSE2 unpack in
/// `arch::hilbert_key`.
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2"),
    allow(
        dead_code,
        reason = "x86-64 builds the versions with SSE2; tests cover this one"
    )
)]
#[inline(always)]
pub(crate) fn tile_versions(x: u32, y: u32) -> [u16; 16] {
    let mut versions = [0u16; 16];
    let (xb, yb) = (x.to_le_bytes(), y.to_le_bytes());
    for k in 0..4 {
        let (tx, ty) = (u16::from(xb[k]), u16::from(yb[k]));
        versions[k] = tx << 8 | ty;
        versions[4 + k] = ty << 8 | tx;
        versions[8 + k] = !versions[k];
        versions[12 + k] = !versions[4 + k];
    }
    versions
}

/// The state after a tile whose packed `next` entry is `next`, entered in state `s` (< 4).
#[inline(always)]
fn step(next: u8, s: usize) -> usize {
    // With `s < 4`, `next << 2 | s` is below 1024, so the index needs no bounds check.
    STEP[usize::from(next) << 2 | s] as usize
}

/// The `digits` index of each tile, least significant tile first, from the [`tile_versions`]:
/// three `next` loads that do not depend on one another, then a three-step state chain of
/// [`STEP`] loads.
#[inline(always)]
pub(crate) fn digit_tiles(versions: &[u16; 16]) -> [u16; 4] {
    let next = &TILES.next;
    let top = versions[3];
    let s2 = usize::from(next[usize::from(top)]) & 3;
    let s1 = step(next[usize::from(versions[2])], s2);
    let s0 = step(next[usize::from(versions[1])], s1);
    [
        versions[s0 << 2],
        versions[s1 << 2 | 1],
        versions[s2 << 2 | 2],
        top,
    ]
}

/// The `digits` index of the top two tiles (tile 2, then the top one): [`digit_tiles`] for 16
/// bits per axis or fewer, where the lower two tiles are shifted out of the key.
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "sse2")),
    allow(dead_code, reason = "only the SSE2 encoder takes the shortcut")
)]
#[inline(always)]
pub(crate) fn digit_tiles_top(versions: &[u16; 16]) -> [u16; 2] {
    let top = versions[3];
    let s2 = usize::from(TILES.next[usize::from(top)]) & 3;
    [versions[s2 << 2 | 2], top]
}

/// `scalar::encode32` from the [`tile_versions`]: the [`digit_tiles`], then four independent
/// `digits` loads.
#[cfg_attr(
    all(target_arch = "x86_64", target_feature = "sse2"),
    allow(
        dead_code,
        reason = "x86-64 assembles the key with SSE2; tests cover this one"
    )
)]
#[inline(always)]
pub(crate) fn encode32_versions(versions: &[u16; 16]) -> u64 {
    let digits = &TILES.digits;
    let [t0, t1, t2, t3] = digit_tiles(versions).map(|t| u64::from(digits[usize::from(t)]));
    t3 << 48 | t2 << 32 | t1 << 16 | t0
}

/// Inverse of `scalar::encode32`.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time `xy2d` over all 32 levels (the reference the tables were built from).
    fn reference(x: u32, y: u32) -> u64 {
        walk(u64::from(x), u64::from(y), 0, 32).0
    }

    /// Cells covering every tile byte in every position, the corners, and pseudo-random values.
    fn cells() -> Vec<(u32, u32)> {
        let mut cells = vec![(0, 0), (u32::MAX, u32::MAX), (0, u32::MAX), (u32::MAX, 0)];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..20_000u32 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            cells.push((state as u32, (state >> 32) as u32));
            let b = i % 256;
            cells.push((
                b * 0x0101_0101,
                ((255 - b) * 0x0100_0001) ^ (state as u32 & 0x00ff_ff00),
            ));
        }
        cells
    }

    #[test]
    fn step_table_selects_the_lane() {
        for next in 0..=255u8 {
            for s in 0..4 {
                assert_eq!(step(next, s), usize::from(next >> (2 * s)) & 3);
            }
        }
    }

    #[test]
    fn tile_tables_follow_the_walk() {
        for tile in [0usize, 1, 0x80, 0xff, 0x1234, 0xff00, 0xfedc, 0xffff] {
            for s in 0..4usize {
                let (digits, after) = walk((tile >> 8) as u64, (tile & 0xff) as u64, s as u64, 8);
                assert_eq!(u64::from(TILES.digits[transform(tile, s)]), digits);
                assert_eq!(u64::from(TILES.next[tile] >> (2 * s) & 3), after);
            }
        }
    }

    #[test]
    fn portable_encode_equals_reference() {
        for (x, y) in cells() {
            assert_eq!(
                encode32_versions(&tile_versions(x, y)),
                reference(x, y),
                "({x}, {y})"
            );
        }
    }

    #[test]
    fn encode_equals_reference_and_decode_inverts_it() {
        for (x, y) in cells() {
            let key = crate::scalar::encode32(x, y);
            assert_eq!(key, reference(x, y), "({x}, {y})");
            assert_eq!(decode32(key), (x, y));
        }
    }
}
