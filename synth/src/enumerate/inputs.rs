//! The fixed inputs every candidate is fingerprinted on, and the hash of a
//! candidate's outputs on them. Inputs are full-width (128-bit) vectors; a
//! Halide term is evaluated at reduced lanes on their low bits, an x86 term
//! on the whole vectors (its low bits are then compared).

use misaal_isa::BitVec;

/// Input bits a Halide term sees at reduced lanes (of 128).
pub const REDUCED_BITS: u32 = 64;
/// Bits of a full input vector.
pub const FULL_BITS: u32 = 128;

/// A small deterministic generator (xorshift*), so fingerprints do not
/// depend on any crate's random stream.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Per-element edge values (0, 1, -1, MIN, MAX, MAX-1) at one element width,
/// laid out so that neighbouring lanes differ: the lane-wise pattern of an
/// edge input for that width.
fn edge_vector(elem: u32, phase: usize) -> BitVec {
    let mask = if elem == 64 { u64::MAX } else { (1u64 << elem) - 1 };
    let vals = [0u64, 1, mask, 1u64 << (elem - 1), (1u64 << (elem - 1)) - 1, mask - 1];
    let mut v = BitVec::zero(FULL_BITS);
    for lane in 0..FULL_BITS / elem {
        let x = vals[(lane as usize + phase) % vals.len()];
        for b in 0..elem {
            if x >> b & 1 == 1 {
                v.set_bit(lane * elem + b, true);
            }
        }
    }
    v
}

/// `cases` input tuples of `arity` 128-bit vectors: edge patterns at every
/// element width paired with random vectors, then random tuples. The same
/// seed always gives the same inputs.
pub fn input_set(arity: usize, cases: usize, seed: u64) -> Vec<Vec<BitVec>> {
    let mut rng = Rng(seed | 1);
    let random = |rng: &mut Rng| BitVec::from_limbs(FULL_BITS, &[rng.next(), rng.next()]);
    let mut out = Vec::with_capacity(cases);
    let mut phase = 0usize;
    // Edge tuples: operand k takes an edge pattern, the others are random or
    // also edges (so that e.g. MIN against -1 appears in a binary op).
    // (shift 2: every operand the same edge vector, so MIN meets MIN in a
    // lane, the case where vpmulhrsw and Halide part.)
    'edges: for elem in [8u32, 16, 32, 64] {
        for k in 0..arity.max(1) {
            for shift in 0..3 {
                if shift == 2 && (k > 0 || arity < 2) {
                    continue;
                }
                if out.len() >= cases / 2 {
                    break 'edges;
                }
                let tuple: Vec<BitVec> = (0..arity)
                    .map(|j| match shift {
                        0 if j != k => random(&mut rng),
                        2 => edge_vector(elem, phase),
                        _ => edge_vector(elem, phase + j * 2),
                    })
                    .collect();
                phase += 1;
                out.push(tuple);
            }
        }
    }
    while out.len() < cases {
        let tuple = (0..arity).map(|_| random(&mut rng)).collect();
        out.push(tuple);
    }
    out
}

/// [`input_set`] at another register width: a 64-bit register (an ARM D
/// register) holds each vector's low half; a wider one (an HVX register)
/// holds it in its low 128 bits, above which the bits are random (same
/// seed, same bits). At 128 bits this is `input_set` itself.
pub fn input_set_bits(arity: usize, cases: usize, seed: u64, bits: u32) -> Vec<Vec<BitVec>> {
    let base = input_set(arity, cases, seed);
    if bits <= FULL_BITS {
        return base.into_iter().map(|t| t.into_iter().map(|v| v.truncate(bits)).collect()).collect();
    }
    let mut rng = Rng(seed.rotate_left(17) | 1);
    base.into_iter()
        .map(|t| {
            t.into_iter()
                .map(|v| {
                    let mut limbs = v.limbs().to_vec();
                    while (limbs.len() as u32) * 64 < bits {
                        limbs.push(rng.next());
                    }
                    BitVec::from_limbs(bits, &limbs)
                })
                .collect()
        })
        .collect()
}

/// The inputs a Halide term sees at reduced lanes: each vector's low bits.
pub fn reduced(inputs: &[Vec<BitVec>]) -> Vec<Vec<BitVec>> {
    inputs.iter().map(|t| t.iter().map(|v| v.truncate(REDUCED_BITS)).collect()).collect()
}

/// The reduced inputs of a Halide unit `unit_bits` wide: each vector's low
/// `unit_bits / 2` bits (64 of a 128-bit unit, 32 of a 64-bit one).
pub fn reduced_to(inputs: &[Vec<BitVec>], unit_bits: u32) -> Vec<Vec<BitVec>> {
    inputs.iter().map(|t| t.iter().map(|v| v.truncate(unit_bits / 2)).collect()).collect()
}

/// FNV-1a over the values' words and widths.
pub fn fingerprint<'a>(vals: impl IntoIterator<Item = &'a BitVec>) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in vals {
        for &x in v.limbs() {
            h = (h ^ x).wrapping_mul(0x100_0000_01b3);
        }
        h = (h ^ v.width() as u64).wrapping_mul(0x100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_deterministic_and_hold_edges() {
        let a = input_set(2, 32, 7);
        assert_eq!(a, input_set(2, 32, 7));
        assert_eq!(a.len(), 32);
        // Some u16 lane is 0x8000 (MIN) in some input.
        assert!(a.iter().any(|t| (0..8).any(|l| t[0].bits_u64(l * 16, 16) == 0x8000)));
        assert_ne!(fingerprint(&a[0]), fingerprint(&a[1]));
        // Other widths keep the 128-bit inputs' low bits.
        assert_eq!(input_set_bits(2, 32, 7, 128), a);
        let wide = input_set_bits(2, 32, 7, 1024);
        assert!(wide.iter().zip(&a).all(|(w, n)| w.iter().zip(n).all(|(w, n)| w.width() == 1024 && w.truncate(128) == *n)));
        let narrow = input_set_bits(2, 32, 7, 64);
        assert!(narrow.iter().zip(&a).all(|(w, n)| w.iter().zip(n).all(|(w, n)| *w == n.truncate(64))));
    }
}
