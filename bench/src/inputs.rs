//! The input sets every target's bench feeds a kernel, seed for seed: the
//! x86, ARM and HVX runs of one kernel see the same bytes.

use crate::Kernel;

fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// The generator state of kernel `name`'s input set `run`.
pub fn input_seed(name: &str, run: usize) -> u64 {
    0x9e37_79b9_7f4a_7c15u64 ^ (run as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ name.bytes().fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
}

/// Input set `run` of `n` elements of `size` bytes. Set 0 (the timed one)
/// is uniform; after it, sets alternate between all-maximum elements and
/// an edge mix, where 40% of elements are 0, all ones, signed MIN or
/// signed MAX, so saturation, rounding and overflow paths are compared too.
pub fn input_data(run: usize, n: usize, size: usize, state: &mut u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * size);
    for _ in 0..n {
        let r = xorshift(state);
        let edge = match run {
            0 => None,
            r1 if r1 % 2 == 1 => Some(1),
            _ => (r % 10 < 4).then_some((r >> 8) % 4),
        };
        for k in 0..size {
            out.push(match edge {
                None => (xorshift(state) >> 24) as u8,
                Some(0) => 0,
                Some(1) => 0xFF,
                // Little-endian: the sign bit is in the last byte.
                Some(2) => {
                    if k + 1 == size {
                        0x80
                    } else {
                        0
                    }
                }
                _ => {
                    if k + 1 == size {
                        0x7F
                    } else {
                        0xFF
                    }
                }
            });
        }
    }
    out
}

/// One input set: each input buffer's name and bytes, in manifest order.
pub type InputSet = Vec<(String, Vec<u8>)>;

/// Kernel `k`'s input set `run`.
pub fn input_set(k: &Kernel, run: usize) -> InputSet {
    let mut state = input_seed(&k.name, run);
    k.args.iter().filter(|a| a.buffer && !a.output).map(|a| (a.name.clone(), input_data(run, a.elements(), (a.ty.bits as usize).div_ceil(8), &mut state))).collect()
}

#[cfg(test)]
mod tests {
    use super::input_data;

    #[test]
    fn input_sets_after_the_first_hit_the_edges() {
        let mut s = 0x1234_5678u64;
        let random = input_data(0, 1000, 2, &mut s);
        assert!(random.iter().filter(|&&b| b == 0xFF).count() < 50);
        assert!(input_data(1, 1000, 2, &mut s).iter().all(|&b| b == 0xFF));
        let mix: Vec<u16> = input_data(2, 1000, 2, &mut s).chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        for edge in [0, 0xFFFF, 0x8000, 0x7FFF] {
            let n = mix.iter().filter(|&&v| v == edge).count();
            assert!((60..=140).contains(&n), "{edge:#x} appears {n} times in 1000");
        }
    }
}
