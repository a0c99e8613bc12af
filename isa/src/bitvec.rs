//! Arbitrary-width bit-vector values for the concrete semantics evaluator.
//!
//! Values are little-endian 64-bit limbs in a `SmallVec`, so the common SIMD
//! lane widths (<= 128 bits) never touch the heap. Every operation maintains
//! the invariant that bits at positions >= `width` are zero; that is what makes
//! the derived `PartialEq`/`Hash` correct and lets operations skip re-masking
//! their inputs.
//!
//! Widths <= 128 (lanes and most intermediates) take a `u128` fast path in
//! every hot operation; wider values fall back to limb-wise loops.
//!
//! Width mismatches and out-of-range indices panic: callers are type-checked,
//! so hitting one is an evaluator bug, not a user error.

use std::cmp::Ordering;
use std::fmt;

use smallvec::{SmallVec, smallvec};

/// Largest supported width: headroom over 512-bit registers for widened
/// intermediates and concatenations, up to the widest vector a Halide
/// schedule gives (128 lanes of 64 bits: a random pipeline's i8x128 cast
/// to i64 could not be evaluated at 4,096 bits).
pub const MAX_WIDTH: u32 = 8192;

type Limbs = SmallVec<[u64; 2]>;

/// A fixed-width bit-vector; signedness lives in the operations, not the value.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct BitVec {
    width: u32,
    limbs: Limbs,
}

#[inline]
fn limb_count(width: u32) -> usize {
    width.div_ceil(64) as usize
}

/// Mask of the valid bits in the most significant limb.
#[inline]
fn top_mask(width: u32) -> u64 {
    match width % 64 {
        0 => u64::MAX,
        r => (1u64 << r) - 1,
    }
}

/// Mask of the low `width` bits, for the <= 128-bit fast paths.
#[inline]
fn mask128(width: u32) -> u128 {
    if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    }
}

/// Sign-extends the low `width` bits of `v` (1 <= width <= 128).
#[inline]
fn sext128(v: u128, width: u32) -> i128 {
    let s = 128 - width;
    ((v << s) as i128) >> s
}

#[inline]
#[track_caller]
fn check_width(width: u32) {
    assert!(
        (1..=MAX_WIDTH).contains(&width),
        "BitVec: width {width} outside 1..={MAX_WIDTH}"
    );
}

/// Shift amounts of any width collapse to a u64; anything that does not fit
/// is certainly >= every legal width, so saturating is exact.
#[inline]
fn amount_u64(amount: &BitVec) -> u64 {
    if amount.limbs[1..].iter().any(|&l| l != 0) {
        u64::MAX
    } else {
        amount.limbs[0]
    }
}

const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

impl BitVec {
    // ----- internal helpers -------------------------------------------------

    /// Builds a <= 128-bit value without touching the heap or `SmallVec`'s
    /// generic clone path; every narrow fast path funnels through here.
    #[inline]
    fn fit128(width: u32, v: u128) -> Self {
        debug_assert!((1..=128).contains(&width));
        let v = v & mask128(width);
        BitVec {
            width,
            limbs: Limbs::from_buf_and_len([v as u64, (v >> 64) as u64], limb_count(width)),
        }
    }

    #[inline]
    fn is_narrow(&self) -> bool {
        self.width <= 128
    }

    /// Memcpy clone; the derived `Clone` goes through a slower generic path.
    #[inline]
    fn copy(&self) -> Self {
        BitVec {
            width: self.width,
            limbs: Limbs::from_slice(&self.limbs),
        }
    }

    /// Restores the zero-above-width invariant after limb-wise work.
    #[inline]
    fn mask_top(&mut self) {
        let m = top_mask(self.width);
        if let Some(last) = self.limbs.last_mut() {
            *last &= m;
        }
    }

    #[inline]
    #[track_caller]
    fn same_width(&self, other: &Self, op: &str) {
        assert!(
            self.width == other.width,
            "BitVec::{op}: width mismatch ({} vs {})",
            self.width,
            other.width
        );
    }

    /// The 64 bits starting at bit `pos` (zero beyond the width), used to do
    /// unaligned limb moves without per-bit loops.
    #[inline]
    fn word_at(&self, pos: u32) -> u64 {
        let li = (pos / 64) as usize;
        let bs = pos % 64;
        let lo = self.limbs.get(li).copied().unwrap_or(0);
        if bs == 0 {
            lo
        } else {
            let hi = self.limbs.get(li + 1).copied().unwrap_or(0);
            (lo >> bs) | (hi << (64 - bs))
        }
    }

    /// Sets bits `[lo, width)`; the sign-fill step of sext/ashr.
    #[inline]
    fn fill_ones_from(&mut self, lo: u32) {
        let li = (lo / 64) as usize;
        if li < self.limbs.len() {
            self.limbs[li] |= u64::MAX << (lo % 64);
            for l in &mut self.limbs[li + 1..] {
                *l = u64::MAX;
            }
            self.mask_top();
        }
    }

    /// Whether every bit in `[lo, width)` equals `val`; decides whether a
    /// saturating narrow is exact without materialising the bound.
    fn high_bits_all(&self, lo: u32, val: bool) -> bool {
        if lo >= self.width {
            return true;
        }
        let fill = if val { u64::MAX } else { 0 };
        let li = (lo / 64) as usize;
        let last = self.limbs.len() - 1;
        self.limbs.iter().enumerate().skip(li).all(|(i, &l)| {
            let mut m = u64::MAX;
            if i == li {
                m &= u64::MAX << (lo % 64);
            }
            if i == last {
                m &= top_mask(self.width);
            }
            (l ^ fill) & m == 0
        })
    }

    /// Limb-wise binary op for the > 128-bit path (`f` never sets bits that
    /// are clear in both inputs, or the caller masks afterwards).
    #[inline]
    fn zip_limbs(&self, other: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        let limbs = self
            .limbs
            .iter()
            .zip(other.limbs.iter())
            .map(|(&a, &b)| f(a, b))
            .collect();
        BitVec {
            width: self.width,
            limbs,
        }
    }

    // ----- constructors -----------------------------------------------------

    pub fn zero(width: u32) -> Self {
        check_width(width);
        if width <= 128 {
            return Self::fit128(width, 0);
        }
        BitVec {
            width,
            limbs: smallvec![0; limb_count(width)],
        }
    }

    pub fn ones(width: u32) -> Self {
        check_width(width);
        if width <= 128 {
            return Self::fit128(width, u128::MAX);
        }
        let mut r = BitVec {
            width,
            limbs: smallvec![u64::MAX; limb_count(width)],
        };
        r.mask_top();
        r
    }

    /// Little-endian limbs; bits at and above `width` are cleared.
    pub fn from_limbs(width: u32, limbs: &[u64]) -> Self {
        check_width(width);
        assert_eq!(limbs.len(), limb_count(width), "BitVec::from_limbs: {} limbs for width {width}", limbs.len());
        let mut r = BitVec { width, limbs: Limbs::from_slice(limbs) };
        r.mask_top();
        r
    }

    /// Bits `[lo, lo + n)` as a word (`n <= 64`, `lo + n <= width`).
    #[inline]
    pub fn bits_u64(&self, lo: u32, n: u32) -> u64 {
        debug_assert!(n <= 64 && lo + n <= self.width);
        let (i, sh) = ((lo / 64) as usize, lo % 64);
        let mut v = self.limbs[i] >> sh;
        if sh != 0 && i + 1 < self.limbs.len() {
            v |= self.limbs[i + 1] << (64 - sh);
        }
        if n >= 64 { v } else { v & ((1u64 << n) - 1) }
    }

    /// Truncates `v` to `width` bits.
    pub fn from_u64(width: u32, v: u64) -> Self {
        Self::from_u128(width, u128::from(v))
    }

    /// Truncates `v` to `width` bits.
    pub fn from_u128(width: u32, v: u128) -> Self {
        check_width(width);
        if width <= 128 {
            return Self::fit128(width, v);
        }
        let mut r = Self::zero(width);
        r.limbs[0] = v as u64;
        r.limbs[1] = (v >> 64) as u64;
        r
    }

    /// Two's complement of `v`, sign-extended or truncated to `width` bits.
    pub fn from_i128(width: u32, v: i128) -> Self {
        check_width(width);
        if width <= 128 {
            return Self::fit128(width, v as u128);
        }
        let fill = if v < 0 { u64::MAX } else { 0 };
        let mut limbs: Limbs = smallvec![fill; limb_count(width)];
        limbs[0] = v as u64;
        limbs[1] = (v >> 64) as u64;
        let mut r = BitVec { width, limbs };
        r.mask_top();
        r
    }

    /// Little-endian bytes; missing bytes read as zero, excess bits are dropped.
    pub fn from_bytes_le(width: u32, bytes: &[u8]) -> Self {
        let mut r = Self::zero(width);
        for (limb, chunk) in r.limbs.iter_mut().zip(bytes.chunks(8)) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            *limb = u64::from_le_bytes(buf);
        }
        r.mask_top();
        r
    }

    pub fn signed_min(width: u32) -> Self {
        let mut r = Self::zero(width);
        r.set_bit(width - 1, true);
        r
    }

    pub fn signed_max(width: u32) -> Self {
        let mut r = Self::ones(width);
        r.set_bit(width - 1, false);
        r
    }

    pub fn unsigned_max(width: u32) -> Self {
        Self::ones(width)
    }

    /// Parses hex with optional `0x`/`0X` prefix and `_` separators. Leading
    /// zeros beyond the width are accepted; significant bits beyond it are not.
    pub fn parse_hex(width: u32, s: &str) -> Result<Self, String> {
        if !(1..=MAX_WIDTH).contains(&width) {
            return Err(format!("bit-vector width {width} outside 1..={MAX_WIDTH}"));
        }
        let digits = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .unwrap_or(s);
        let mut r = Self::zero(width);
        let mut pos: u64 = 0;
        let mut any = false;
        let w = u64::from(width);
        for c in digits.chars().rev() {
            if c == '_' {
                continue;
            }
            let d = u64::from(
                c.to_digit(16)
                    .ok_or_else(|| format!("invalid hex digit {c:?} in {s:?}"))?,
            );
            any = true;
            if d != 0 {
                if pos >= w || (pos + 4 > w && d >> (w - pos) != 0) {
                    return Err(format!("hex literal {s:?} does not fit in {width} bits"));
                }
                r.limbs[(pos / 64) as usize] |= d << (pos % 64);
            }
            pos += 4;
        }
        if !any {
            return Err(format!("hex literal {s:?} has no digits"));
        }
        Ok(r)
    }

    // ----- accessors --------------------------------------------------------

    #[inline]
    pub fn width(&self) -> u32 {
        self.width
    }

    #[inline]
    #[track_caller]
    pub fn bit(&self, i: u32) -> bool {
        assert!(
            i < self.width,
            "BitVec::bit: index {i} out of range for width {}",
            self.width
        );
        (self.limbs[(i / 64) as usize] >> (i % 64)) & 1 == 1
    }

    #[inline]
    #[track_caller]
    pub fn set_bit(&mut self, i: u32, value: bool) {
        assert!(
            i < self.width,
            "BitVec::set_bit: index {i} out of range for width {}",
            self.width
        );
        let l = &mut self.limbs[(i / 64) as usize];
        let m = 1u64 << (i % 64);
        if value {
            *l |= m;
        } else {
            *l &= !m;
        }
    }

    #[inline]
    pub fn is_zero(&self) -> bool {
        self.limbs.iter().all(|&l| l == 0)
    }

    /// Low 64 bits (zero-extended if narrower).
    #[inline]
    pub fn to_u64(&self) -> u64 {
        self.limbs[0]
    }

    /// Low 128 bits (zero-extended if narrower).
    #[inline]
    pub fn to_u128(&self) -> u128 {
        let hi = self.limbs.get(1).copied().unwrap_or(0);
        u128::from(self.limbs[0]) | (u128::from(hi) << 64)
    }

    /// `ceil(width / 8)` little-endian bytes.
    pub fn to_bytes_le(&self) -> Vec<u8> {
        let n = self.width.div_ceil(8) as usize;
        self.limbs
            .iter()
            .flat_map(|l| l.to_le_bytes())
            .take(n)
            .collect()
    }

    #[inline]
    pub fn limbs(&self) -> &[u64] {
        &self.limbs
    }

    #[inline]
    pub fn msb(&self) -> bool {
        let top = self.width - 1;
        (self.limbs[(top / 64) as usize] >> (top % 64)) & 1 == 1
    }

    /// `0x` plus exactly `ceil(width / 4)` lowercase digits, so the printed
    /// length reflects the width (up to nibble rounding).
    pub fn to_hex(&self) -> String {
        let digits = self.width.div_ceil(4);
        let mut s = String::with_capacity(2 + digits as usize);
        s.push_str("0x");
        for d in (0..digits).rev() {
            let pos = d * 4;
            let nib = (self.limbs[(pos / 64) as usize] >> (pos % 64)) & 0xf;
            s.push(HEX_DIGITS[nib as usize] as char);
        }
        s
    }

    /// The value as a u64 when it fits, regardless of width (useful for
    /// indices and shift counts held in wide vectors).
    #[inline]
    pub fn as_small_u64(&self) -> Option<u64> {
        if self.limbs[1..].iter().all(|&l| l == 0) {
            Some(self.limbs[0])
        } else {
            None
        }
    }

    #[inline]
    pub fn popcount(&self) -> u32 {
        self.limbs.iter().map(|l| l.count_ones()).sum()
    }

    /// Number of zero bits above the most significant one (width if zero).
    pub fn leading_zeros(&self) -> u32 {
        let pad = self.limbs.len() as u32 * 64 - self.width;
        let mut n = 0;
        for &l in self.limbs.iter().rev() {
            if l != 0 {
                return n + l.leading_zeros() - pad;
            }
            n += 64;
        }
        self.width
    }

    /// Number of zero bits below the least significant one (width if zero).
    pub fn trailing_zeros(&self) -> u32 {
        let mut n = 0;
        for &l in &self.limbs {
            if l != 0 {
                return n + l.trailing_zeros();
            }
            n += 64;
        }
        self.width
    }

    // ----- arithmetic and logic ---------------------------------------------

    #[track_caller]
    pub fn add(&self, other: &Self) -> Self {
        self.same_width(other, "add");
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128().wrapping_add(other.to_u128()));
        }
        let mut r = self.copy();
        let mut carry = false;
        for (x, &y) in r.limbs.iter_mut().zip(other.limbs.iter()) {
            let (s1, c1) = x.overflowing_add(y);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *x = s2;
            carry = c1 | c2;
        }
        r.mask_top();
        r
    }

    #[track_caller]
    pub fn sub(&self, other: &Self) -> Self {
        self.same_width(other, "sub");
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128().wrapping_sub(other.to_u128()));
        }
        let mut r = self.copy();
        let mut borrow = false;
        for (x, &y) in r.limbs.iter_mut().zip(other.limbs.iter()) {
            let (d1, b1) = x.overflowing_sub(y);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *x = d2;
            borrow = b1 | b2;
        }
        r.mask_top();
        r
    }

    /// Unsigned quotient with SMT-LIB's rule for a zero divisor: all ones.
    #[track_caller]
    pub fn udiv(&self, other: &Self) -> Self {
        self.udivrem(other).0
    }

    /// Unsigned remainder with SMT-LIB's rule for a zero divisor: the dividend.
    #[track_caller]
    pub fn urem(&self, other: &Self) -> Self {
        self.udivrem(other).1
    }

    #[track_caller]
    fn udivrem(&self, other: &Self) -> (Self, Self) {
        assert_eq!(self.width, other.width, "BitVec::udiv: width mismatch ({} vs {})", self.width, other.width);
        let w = self.width;
        if other.is_zero() {
            return (Self::ones(w), self.clone());
        }
        if w <= 128 {
            let (a, b) = (self.to_u128(), other.to_u128());
            return (Self::from_u128(w, a / b), Self::from_u128(w, a % b));
        }
        // Restoring long division, one bit at a time; wide division is rare.
        let mut q = Self::zero(w);
        let mut r = Self::zero(w);
        for i in (0..w).rev() {
            r = r.shl_u(1);
            r.set_bit(0, self.bit(i));
            if !r.ult(other) {
                r = r.sub(other);
                q.set_bit(i, true);
            }
        }
        (q, r)
    }

    /// Low `width` bits of the product (identical for signed and unsigned).
    #[track_caller]
    pub fn mul(&self, other: &Self) -> Self {
        self.same_width(other, "mul");
        if self.width <= 64 {
            let p = self.limbs[0].wrapping_mul(other.limbs[0]);
            return Self::fit128(self.width, u128::from(p));
        }
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128().wrapping_mul(other.to_u128()));
        }
        let n = self.limbs.len();
        let mut out: Limbs = smallvec![0; n];
        for (i, &a) in self.limbs.iter().enumerate() {
            if a == 0 {
                continue;
            }
            let mut carry = 0u64;
            // Only the low n limbs of the product are kept, so row i stops at n-i.
            for (o, &b) in out[i..].iter_mut().zip(other.limbs.iter()) {
                let t = u128::from(a) * u128::from(b) + u128::from(*o) + u128::from(carry);
                *o = t as u64;
                carry = (t >> 64) as u64;
            }
        }
        let mut r = BitVec {
            width: self.width,
            limbs: out,
        };
        r.mask_top();
        r
    }

    pub fn neg(&self) -> Self {
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128().wrapping_neg());
        }
        let mut r = self.copy();
        let mut carry = true;
        for x in r.limbs.iter_mut() {
            let (v, c) = (!*x).overflowing_add(u64::from(carry));
            *x = v;
            carry = c;
        }
        r.mask_top();
        r
    }

    pub fn not(&self) -> Self {
        if self.is_narrow() {
            return Self::fit128(self.width, !self.to_u128());
        }
        let mut r = self.copy();
        for x in r.limbs.iter_mut() {
            *x = !*x;
        }
        r.mask_top();
        r
    }

    #[track_caller]
    pub fn and(&self, other: &Self) -> Self {
        self.same_width(other, "and");
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128() & other.to_u128());
        }
        self.zip_limbs(other, |a, b| a & b)
    }

    #[track_caller]
    pub fn or(&self, other: &Self) -> Self {
        self.same_width(other, "or");
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128() | other.to_u128());
        }
        self.zip_limbs(other, |a, b| a | b)
    }

    #[track_caller]
    pub fn xor(&self, other: &Self) -> Self {
        self.same_width(other, "xor");
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128() ^ other.to_u128());
        }
        self.zip_limbs(other, |a, b| a ^ b)
    }

    // ----- shifts -----------------------------------------------------------

    /// `amount` may have any width and is read as unsigned.
    pub fn shl(&self, amount: &BitVec) -> Self {
        self.shl_u(amount_u64(amount))
    }

    /// `amount` may have any width and is read as unsigned.
    pub fn lshr(&self, amount: &BitVec) -> Self {
        self.lshr_u(amount_u64(amount))
    }

    /// `amount` may have any width and is read as unsigned.
    pub fn ashr(&self, amount: &BitVec) -> Self {
        self.ashr_u(amount_u64(amount))
    }

    /// Shift left; `n >= width` yields zero.
    pub fn shl_u(&self, n: u64) -> Self {
        if n >= u64::from(self.width) {
            return Self::zero(self.width);
        }
        let n = n as u32;
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128() << n);
        }
        let ls = (n / 64) as usize;
        let bs = n % 64;
        let mut out: Limbs = smallvec![0; self.limbs.len()];
        for (i, o) in out.iter_mut().enumerate().skip(ls) {
            let src = i - ls;
            let mut v = self.limbs[src] << bs;
            if bs != 0 && src > 0 {
                v |= self.limbs[src - 1] >> (64 - bs);
            }
            *o = v;
        }
        let mut r = BitVec {
            width: self.width,
            limbs: out,
        };
        r.mask_top();
        r
    }

    /// Logical shift right; `n >= width` yields zero.
    pub fn lshr_u(&self, n: u64) -> Self {
        if n >= u64::from(self.width) {
            return Self::zero(self.width);
        }
        let n = n as u32;
        if self.is_narrow() {
            return Self::fit128(self.width, self.to_u128() >> n);
        }
        let mut out: Limbs = smallvec![0; self.limbs.len()];
        let live = self.limbs.len() - (n / 64) as usize;
        for (i, o) in out.iter_mut().enumerate().take(live) {
            *o = self.word_at(n + 64 * i as u32);
        }
        // Bits read from beyond the width are zero, so no re-masking needed.
        BitVec {
            width: self.width,
            limbs: out,
        }
    }

    /// Arithmetic shift right; `n >= width` yields all copies of the sign bit.
    pub fn ashr_u(&self, n: u64) -> Self {
        if self.is_narrow() {
            // Shifting by width-1 already replicates the sign everywhere.
            let n = n.min(u64::from(self.width - 1)) as u32;
            let v = sext128(self.to_u128(), self.width) >> n;
            return Self::fit128(self.width, v as u128);
        }
        if !self.msb() {
            return self.lshr_u(n);
        }
        if n >= u64::from(self.width) {
            return Self::ones(self.width);
        }
        let n = n as u32;
        let mut r = self.lshr_u(u64::from(n));
        r.fill_ones_from(self.width - n);
        r
    }

    // ----- comparisons ------------------------------------------------------

    #[track_caller]
    pub fn ucmp(&self, other: &Self) -> Ordering {
        self.same_width(other, "ucmp");
        if self.is_narrow() {
            return self.to_u128().cmp(&other.to_u128());
        }
        self.limbs.iter().rev().cmp(other.limbs.iter().rev())
    }

    #[track_caller]
    pub fn scmp(&self, other: &Self) -> Ordering {
        self.same_width(other, "scmp");
        match (self.msb(), other.msb()) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // Same sign: two's complement order equals unsigned order.
            _ => self.ucmp(other),
        }
    }

    #[track_caller]
    pub fn ult(&self, other: &Self) -> bool {
        self.ucmp(other) == Ordering::Less
    }

    #[track_caller]
    pub fn ule(&self, other: &Self) -> bool {
        self.ucmp(other) != Ordering::Greater
    }

    #[track_caller]
    pub fn slt(&self, other: &Self) -> bool {
        self.scmp(other) == Ordering::Less
    }

    #[track_caller]
    pub fn sle(&self, other: &Self) -> bool {
        self.scmp(other) != Ordering::Greater
    }

    // ----- width changes ----------------------------------------------------

    #[track_caller]
    pub fn zext(&self, new_width: u32) -> Self {
        check_width(new_width);
        assert!(
            new_width >= self.width,
            "BitVec::zext: new width {new_width} < width {}",
            self.width
        );
        if new_width <= 128 {
            return Self::fit128(new_width, self.to_u128());
        }
        let mut limbs = Limbs::from_slice(&self.limbs);
        limbs.resize(limb_count(new_width), 0);
        BitVec {
            width: new_width,
            limbs,
        }
    }

    #[track_caller]
    pub fn sext(&self, new_width: u32) -> Self {
        check_width(new_width);
        assert!(
            new_width >= self.width,
            "BitVec::sext: new width {new_width} < width {}",
            self.width
        );
        if new_width <= 128 {
            let v = sext128(self.to_u128(), self.width);
            return Self::fit128(new_width, v as u128);
        }
        let mut r = self.zext(new_width);
        if self.msb() {
            r.fill_ones_from(self.width);
        }
        r
    }

    /// Bits `hi..=lo`, giving width `hi - lo + 1`.
    #[track_caller]
    pub fn extract(&self, hi: u32, lo: u32) -> Self {
        assert!(
            lo <= hi && hi < self.width,
            "BitVec::extract: [{hi}:{lo}] out of range for width {}",
            self.width
        );
        let width = hi - lo + 1;
        if self.is_narrow() {
            return Self::fit128(width, self.to_u128() >> lo);
        }
        if width <= 128 {
            let v = u128::from(self.word_at(lo)) | (u128::from(self.word_at(lo + 64)) << 64);
            return Self::fit128(width, v);
        }
        let limbs: Limbs = (0..limb_count(width) as u32)
            .map(|i| self.word_at(lo + 64 * i))
            .collect();
        let mut r = BitVec { width, limbs };
        r.mask_top();
        r
    }

    /// `hi` occupies the most significant bits of the result.
    #[track_caller]
    pub fn concat(hi: &BitVec, lo: &BitVec) -> BitVec {
        let width = hi.width + lo.width;
        check_width(width);
        if width <= 128 {
            // lo.width < 128 here because hi.width >= 1.
            return Self::fit128(width, (hi.to_u128() << lo.width) | lo.to_u128());
        }
        let mut r = lo.zext(width);
        let li0 = (lo.width / 64) as usize;
        let bs = lo.width % 64;
        // Limb i of `hi` starts below `width`, so r.limbs[li0 + i] exists; the
        // spill into the next limb is only nonzero when that limb exists too.
        for (i, &h) in hi.limbs.iter().enumerate() {
            let li = li0 + i;
            r.limbs[li] |= h << bs;
            if bs != 0
                && let Some(l) = r.limbs.get_mut(li + 1)
            {
                *l |= h >> (64 - bs);
            }
        }
        r
    }

    /// Keeps the low `new_width` bits.
    #[track_caller]
    pub fn truncate(&self, new_width: u32) -> Self {
        check_width(new_width);
        assert!(
            new_width <= self.width,
            "BitVec::truncate: new width {new_width} > width {}",
            self.width
        );
        if new_width <= 128 {
            return Self::fit128(new_width, self.to_u128());
        }
        let mut r = BitVec {
            width: new_width,
            limbs: Limbs::from_slice(&self.limbs[..limb_count(new_width)]),
        };
        r.mask_top();
        r
    }

    // ----- saturation -------------------------------------------------------

    /// Reads `self` as signed and clamps into the signed `to`-bit range.
    #[track_caller]
    pub fn sat_signed(&self, to: u32) -> Self {
        check_width(to);
        if to >= self.width {
            return self.sext(to);
        }
        if self.is_narrow() {
            let v = sext128(self.to_u128(), self.width);
            let (min, max) = (i128::MIN >> (128 - to), i128::MAX >> (128 - to));
            return Self::fit128(to, v.clamp(min, max) as u128);
        }
        let neg = self.msb();
        if self.high_bits_all(to - 1, neg) {
            self.truncate(to)
        } else if neg {
            Self::signed_min(to)
        } else {
            Self::signed_max(to)
        }
    }

    /// Reads `self` as unsigned and clamps into `[0, 2^to - 1]`.
    #[track_caller]
    pub fn sat_unsigned(&self, to: u32) -> Self {
        check_width(to);
        if to >= self.width {
            return self.zext(to);
        }
        if self.is_narrow() {
            return Self::fit128(to, self.to_u128().min(mask128(to)));
        }
        if self.high_bits_all(to, false) {
            self.truncate(to)
        } else {
            Self::unsigned_max(to)
        }
    }

    /// Reads `self` as signed and clamps into `[0, 2^to - 1]` (packus-style).
    #[track_caller]
    pub fn sat_signed_to_unsigned(&self, to: u32) -> Self {
        if self.msb() {
            Self::zero(to)
        } else {
            self.sat_unsigned(to)
        }
    }
}

impl fmt::Debug for BitVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Display for BitVec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult, Testable};

    fn qc<A: Testable>(f: A) {
        QuickCheck::new().tests(2000).max_tests(20000).quickcheck(f);
    }

    fn qc_n<A: Testable>(n: u64, f: A) {
        QuickCheck::new().tests(n).max_tests(n * 10).quickcheck(f);
    }

    // ----- u128 reference model ---------------------------------------------

    fn mask(w: u32) -> u128 {
        if w >= 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        }
    }

    fn sx(v: u128, w: u32) -> i128 {
        ((v << (128 - w)) as i128) >> (128 - w)
    }

    /// The invariant every result must satisfy.
    fn valid(b: &BitVec) -> bool {
        b.limbs.len() == limb_count(b.width)
            && *b.limbs.last().unwrap() & !top_mask(b.width) == 0
            && (1..=MAX_WIDTH).contains(&b.width)
    }

    fn ok(b: &BitVec, w: u32, v: u128) -> bool {
        valid(b) && b.width() == w && b.to_u128() == (v & mask(w))
    }

    fn u32_in(g: &mut Gen, lo: u32, hi: u32) -> u32 {
        lo + u32::arbitrary(g) % (hi - lo + 1)
    }

    /// Values biased towards the boundaries where carries and saturation bite.
    fn interesting_u128(g: &mut Gen) -> u128 {
        let k = u32::arbitrary(g) % 129;
        let small = u128::from(u8::arbitrary(g) % 4);
        match u8::arbitrary(g) % 7 {
            0 | 1 => u128::arbitrary(g),
            2 => u128::from(u8::arbitrary(g)),
            3 => (1u128.checked_shl(k).unwrap_or(0)).wrapping_add(small),
            4 => (1u128.checked_shl(k).unwrap_or(0)).wrapping_sub(small),
            5 => !u128::from(u8::arbitrary(g)),
            _ => mask(k) ^ (u128::from(u64::arbitrary(g)) << 32),
        }
    }

    #[derive(Clone, Debug)]
    struct Small {
        w: u32,
        a: u128,
        b: u128,
        raw: u128,
    }

    impl Arbitrary for Small {
        fn arbitrary(g: &mut Gen) -> Self {
            let w = match u8::arbitrary(g) % 4 {
                0 => *g
                    .choose(&[1, 2, 7, 8, 16, 31, 32, 33, 63, 64, 65, 127, 128])
                    .unwrap(),
                _ => u32_in(g, 1, 128),
            };
            Small {
                w,
                a: interesting_u128(g) & mask(w),
                b: interesting_u128(g) & mask(w),
                raw: interesting_u128(g),
            }
        }
    }

    impl Small {
        fn av(&self) -> BitVec {
            BitVec::from_u128(self.w, self.a)
        }
        fn bv(&self) -> BitVec {
            BitVec::from_u128(self.w, self.b)
        }
    }

    #[test]
    fn qc_constructors() {
        fn prop(s: Small) -> bool {
            let w = s.w;
            ok(&BitVec::from_u128(w, s.raw), w, s.raw)
                && ok(
                    &BitVec::from_u64(w, s.raw as u64),
                    w,
                    u128::from(s.raw as u64),
                )
                && ok(&BitVec::from_i128(w, s.raw as i128), w, s.raw)
                && ok(&BitVec::from_i128(w, sx(s.a, w)), w, s.a)
                && ok(&BitVec::zero(w), w, 0)
                && ok(&BitVec::ones(w), w, u128::MAX)
                && ok(&BitVec::unsigned_max(w), w, u128::MAX)
                && ok(&BitVec::signed_min(w), w, 1u128 << (w - 1))
                && ok(&BitVec::signed_max(w), w, mask(w) >> 1)
                && ok(&BitVec::from_bytes_le(w, &s.raw.to_le_bytes()), w, s.raw)
                && ok(
                    &BitVec::from_bytes_le(w, &s.raw.to_le_bytes()[..3]),
                    w,
                    s.raw & 0xff_ffff,
                )
                && ok(&BitVec::from_bytes_le(w, &[]), w, 0)
        }
        qc(prop as fn(Small) -> bool);
    }

    #[test]
    fn qc_accessors() {
        fn prop(s: Small, i: u32, val: bool) -> bool {
            let (w, a) = (s.w, s.a);
            let x = s.av();
            let i = i % w;
            let mut y = x.clone();
            y.set_bit(i, val);
            let nbytes = w.div_ceil(8) as usize;
            let hexd = w.div_ceil(4) as usize;
            x.width() == w
                && x.bit(i) == ((a >> i) & 1 == 1)
                && ok(&y, w, if val { a | (1 << i) } else { a & !(1 << i) })
                && x.is_zero() == (a == 0)
                && x.to_u64() == a as u64
                && x.to_u128() == a
                && x.to_bytes_le() == a.to_le_bytes()[..nbytes]
                && BitVec::from_bytes_le(w, &x.to_bytes_le()) == x
                && x.msb() == ((a >> (w - 1)) & 1 == 1)
                && x.popcount() == a.count_ones()
                && x.leading_zeros() == a.leading_zeros() - (128 - w)
                && x.trailing_zeros() == if a == 0 { w } else { a.trailing_zeros() }
                && x.as_small_u64() == u64::try_from(a).ok()
                && x.limbs().len() == limb_count(w)
                && x.to_hex() == format!("0x{a:0hexd$x}")
                && format!("{x}") == x.to_hex()
                && format!("{x:?}") == x.to_hex()
        }
        qc(prop as fn(Small, u32, bool) -> bool);
    }

    #[test]
    fn qc_parse_hex() {
        fn prop(s: Small) -> bool {
            let (w, a) = (s.w, s.a);
            let x = s.av();
            let plain = format!("{a:x}");
            let mut underscored = String::new();
            for (k, c) in plain.chars().enumerate() {
                if k > 0 && (plain.len() - k) % 4 == 0 {
                    underscored.push('_');
                }
                underscored.push(c);
            }
            let roundtrip = BitVec::parse_hex(w, &x.to_hex()) == Ok(x.clone())
                && BitVec::parse_hex(w, &plain) == Ok(x.clone())
                && BitVec::parse_hex(w, &format!("0X{}", plain.to_uppercase())) == Ok(x.clone())
                && BitVec::parse_hex(w, &format!("0x_{underscored}")) == Ok(x.clone())
                && BitVec::parse_hex(w, &format!("0x0000{plain}")) == Ok(x.clone());
            // Anything with a significant bit at or above w must be rejected.
            let too_big = if w < 128 {
                let v = s.raw | (1u128 << w);
                let r = BitVec::parse_hex(w, &format!("{v:#x}"));
                r.is_err()
                    && BitVec::parse_hex(w + 1, &format!("{v:#x}")).is_ok()
                        == (v.checked_shr(w + 1).unwrap_or(0) == 0)
            } else {
                BitVec::parse_hex(w, &format!("0x1{plain:0>32}")).is_err()
            };
            roundtrip && too_big
        }
        qc(prop as fn(Small) -> bool);
    }

    #[test]
    fn parse_hex_errors() {
        assert!(BitVec::parse_hex(8, "").is_err());
        assert!(BitVec::parse_hex(8, "0x").is_err());
        assert!(BitVec::parse_hex(8, "0x_").is_err());
        assert!(BitVec::parse_hex(8, "0xg1").is_err());
        assert!(BitVec::parse_hex(8, "-1").is_err());
        assert!(BitVec::parse_hex(8, "0x100").is_err());
        assert!(BitVec::parse_hex(0, "0").is_err());
        assert!(BitVec::parse_hex(MAX_WIDTH + 1, "0").is_err());
        assert_eq!(
            BitVec::parse_hex(8, "0x0ff").unwrap(),
            BitVec::from_u64(8, 0xff)
        );
        assert_eq!(
            BitVec::parse_hex(5, "1f").unwrap(),
            BitVec::from_u64(5, 0x1f)
        );
        assert!(BitVec::parse_hex(5, "20").is_err());
        assert!(BitVec::parse_hex(1, "2").is_err());
        assert_eq!(BitVec::parse_hex(1, "0x0001").unwrap(), BitVec::ones(1));
        let long = format!("0x{}", "f".repeat(1024));
        assert_eq!(BitVec::parse_hex(4096, &long).unwrap(), BitVec::ones(4096));
        assert!(BitVec::parse_hex(4095, &long).is_err());
        assert_eq!(
            BitVec::parse_hex(4096, &format!("0x{}", "0".repeat(5000))).unwrap(),
            BitVec::zero(4096)
        );
    }

    #[test]
    fn qc_arith_logic() {
        fn prop(s: Small) -> bool {
            let (w, a, b) = (s.w, s.a, s.b);
            let (x, y) = (s.av(), s.bv());
            ok(&x.add(&y), w, a.wrapping_add(b))
                && ok(&x.sub(&y), w, a.wrapping_sub(b))
                && ok(&x.mul(&y), w, a.wrapping_mul(b))
                && ok(&x.neg(), w, a.wrapping_neg())
                && ok(&x.not(), w, !a)
                && ok(&x.and(&y), w, a & b)
                && ok(&x.or(&y), w, a | b)
                && ok(&x.xor(&y), w, a ^ b)
        }
        qc(prop as fn(Small) -> bool);
    }

    #[derive(Clone, Debug)]
    struct Amount {
        v: BitVec,
        n: u128,
    }

    impl Arbitrary for Amount {
        fn arbitrary(g: &mut Gen) -> Self {
            let aw = u32_in(g, 1, 200);
            let n = match u8::arbitrary(g) % 4 {
                0 | 1 => u128::from(u8::arbitrary(g) % 140),
                2 => u128::from(u32::arbitrary(g)),
                _ => interesting_u128(g),
            } & mask(aw);
            // Occasionally set a bit far above 128 so the amount is huge.
            let mut v = BitVec::from_u128(aw, n);
            let huge = aw > 128 && bool::arbitrary(g);
            if huge {
                v.set_bit(aw - 1, true);
            }
            Amount {
                v,
                n: if huge { u128::MAX } else { n },
            }
        }
    }

    #[test]
    fn qc_shifts() {
        fn prop(s: Small, amt: Amount) -> bool {
            let (w, a) = (s.w, s.a);
            let x = s.av();
            let k = amt.n;
            let shl_ref = if k >= u128::from(w) { 0 } else { a << k };
            let lshr_ref = if k >= u128::from(w) { 0 } else { a >> k };
            let ashr_ref = (sx(a, w) >> k.min(127)) as u128;
            let ku = u64::try_from(k).unwrap_or(u64::MAX);
            ok(&x.shl(&amt.v), w, shl_ref)
                && ok(&x.lshr(&amt.v), w, lshr_ref)
                && ok(&x.ashr(&amt.v), w, ashr_ref)
                && ok(&x.shl_u(ku), w, shl_ref)
                && ok(&x.lshr_u(ku), w, lshr_ref)
                && ok(&x.ashr_u(ku), w, ashr_ref)
        }
        qc(prop as fn(Small, Amount) -> bool);
    }

    #[test]
    fn qc_shifts_in_range() {
        fn prop(s: Small, k: u32) -> bool {
            let (w, a) = (s.w, s.a);
            let x = s.av();
            let k = k % w;
            let kv = BitVec::from_u64(32, u64::from(k));
            ok(&x.shl(&kv), w, a << k)
                && ok(&x.lshr(&kv), w, a >> k)
                && ok(&x.ashr(&kv), w, (sx(a, w) >> k) as u128)
                && ok(&x.shl_u(u64::from(k)), w, a << k)
                && ok(&x.lshr_u(u64::from(k)), w, a >> k)
                && ok(&x.ashr_u(u64::from(k)), w, (sx(a, w) >> k) as u128)
        }
        qc(prop as fn(Small, u32) -> bool);
    }

    #[test]
    fn qc_compare() {
        fn prop(s: Small) -> bool {
            let (w, a, b) = (s.w, s.a, s.b);
            let (x, y) = (s.av(), s.bv());
            let (sa, sb) = (sx(a, w), sx(b, w));
            x.ult(&y) == (a < b)
                && x.ule(&y) == (a <= b)
                && x.slt(&y) == (sa < sb)
                && x.sle(&y) == (sa <= sb)
                && x.ucmp(&y) == a.cmp(&b)
                && x.scmp(&y) == sa.cmp(&sb)
                && (x == y) == (a == b)
                && x.ule(&x)
                && x.sle(&x)
                && !x.ult(&x)
                && !x.slt(&x)
        }
        qc(prop as fn(Small) -> bool);
    }

    #[test]
    fn qc_width_changes() {
        fn prop(s: Small, r1: u32, r2: u32, w2: u32) -> TestResult {
            let (w, a) = (s.w, s.a);
            let x = s.av();
            let nw = w + r1 % (129 - w);
            let lo = r1 % w;
            let hi = lo + r2 % (w - lo);
            let tw = 1 + r2 % w;
            let w2 = 1 + w2 % 64;
            let b = s.b & mask(w2);
            let cat_ok = if w + w2 <= 128 {
                ok(
                    &BitVec::concat(&x, &BitVec::from_u128(w2, b)),
                    w + w2,
                    (a << w2) | b,
                ) && ok(
                    &BitVec::concat(&BitVec::from_u128(w2, b), &x),
                    w + w2,
                    (b << w) | a,
                )
            } else {
                true
            };
            TestResult::from_bool(
                ok(&x.zext(nw), nw, a)
                    && ok(&x.sext(nw), nw, sx(a, w) as u128)
                    && ok(&x.extract(hi, lo), hi - lo + 1, a >> lo)
                    && ok(&x.truncate(tw), tw, a)
                    && cat_ok,
            )
        }
        qc(prop as fn(Small, u32, u32, u32) -> TestResult);
    }

    #[test]
    fn qc_saturation() {
        fn prop(s: Small, to: u32) -> bool {
            let (w, a) = (s.w, s.a);
            let x = s.av();
            let to = 1 + to % 128;
            let sa = sx(a, w);
            let smin = i128::MIN >> (128 - to);
            let smax = i128::MAX >> (128 - to);
            let umax = mask(to);
            let sat_s = sa.clamp(smin, smax) as u128;
            let sat_u = a.min(umax);
            let sat_su = if sa < 0 { 0 } else { (sa as u128).min(umax) };
            ok(&x.sat_signed(to), to, sat_s)
                && ok(&x.sat_unsigned(to), to, sat_u)
                && ok(&x.sat_signed_to_unsigned(to), to, sat_su)
        }
        qc(prop as fn(Small, u32) -> bool);
    }

    // ----- multi-limb: bit-level reference and algebraic identities -----------

    fn bits_of(x: &BitVec) -> Vec<bool> {
        (0..x.width()).map(|i| x.bit(i)).collect()
    }

    fn from_bits(bits: &[bool]) -> BitVec {
        let mut r = BitVec::zero(bits.len() as u32);
        for (i, &b) in bits.iter().enumerate() {
            r.set_bit(i as u32, b);
        }
        r
    }

    fn ref_add(a: &[bool], b: &[bool]) -> Vec<bool> {
        let mut c = false;
        a.iter()
            .zip(b)
            .map(|(&x, &y)| {
                let s = x ^ y ^ c;
                c = (x & y) | (c & (x ^ y));
                s
            })
            .collect()
    }

    fn ref_shift(a: &[bool], k: u64, right: bool, fill: bool) -> Vec<bool> {
        let w = a.len() as u64;
        (0..w)
            .map(|i| {
                let src = if right {
                    i.checked_add(k)
                } else {
                    i.checked_sub(k)
                };
                match src {
                    Some(j) if j < w => a[j as usize],
                    _ => fill,
                }
            })
            .collect()
    }

    fn random_wide(g: &mut Gen, w: u32) -> BitVec {
        let n = limb_count(w);
        let mut limbs: Vec<u64> = match u8::arbitrary(g) % 6 {
            0 => vec![0; n],
            1 => vec![u64::MAX; n],
            2 => {
                let mut v = vec![0; n];
                v[(u32::arbitrary(g) as usize) % n] = 1u64 << (u8::arbitrary(g) % 64);
                v
            }
            3 => (0..n)
                .map(|_| {
                    if bool::arbitrary(g) {
                        u64::MAX
                    } else {
                        u64::arbitrary(g)
                    }
                })
                .collect(),
            _ => (0..n).map(|_| u64::arbitrary(g)).collect(),
        };
        if u8::arbitrary(g) % 5 == 0 {
            // Flip the sign bit pattern to exercise both halves of signed ops.
            limbs.iter_mut().for_each(|l| *l = !*l);
        }
        let bytes: Vec<u8> = limbs.iter().flat_map(|l| l.to_le_bytes()).collect();
        BitVec::from_bytes_le(w, &bytes)
    }

    #[derive(Clone, Debug)]
    struct Wide {
        a: BitVec,
        b: BitVec,
        c: BitVec,
    }

    fn wide_width(g: &mut Gen) -> u32 {
        match u8::arbitrary(g) % 3 {
            0 => *g
                .choose(&[
                    65, 127, 128, 129, 191, 192, 193, 200, 256, 257, 512, 1000, 4095, 4096, 8191, 8192,
                ])
                .unwrap(),
            1 => u32_in(g, 65, 600),
            _ => u32_in(g, 65, MAX_WIDTH),
        }
    }

    impl Arbitrary for Wide {
        fn arbitrary(g: &mut Gen) -> Self {
            let w = wide_width(g);
            Wide {
                a: random_wide(g, w),
                b: random_wide(g, w),
                c: random_wide(g, w),
            }
        }
    }

    #[test]
    fn qc_wide_vs_bit_reference() {
        fn prop(t: Wide, k: u32) -> bool {
            let (a, b) = (&t.a, &t.b);
            let w = a.width();
            let (ab, bb) = (bits_of(a), bits_of(b));
            let k = u64::from(k % (w + w / 4 + 2));
            let nb: Vec<bool> = bb.iter().map(|x| !x).collect();
            let one = {
                let mut v = vec![false; w as usize];
                v[0] = true;
                v
            };
            let sub_ref = ref_add(&ref_add(&ab, &nb), &one);
            let msb = a.msb();
            let ucmp_ref = ab.iter().rev().cmp(bb.iter().rev());
            // Wide enough for every k (up to MAX_WIDTH * 5 / 4 + 1).
            let kv = BitVec::from_u64(14, k);
            valid(&a.add(b))
                && bits_of(&a.add(b)) == ref_add(&ab, &bb)
                && bits_of(&a.sub(b)) == sub_ref
                && bits_of(&a.not()) == ab.iter().map(|x| !x).collect::<Vec<_>>()
                && bits_of(&a.and(b)) == ab.iter().zip(&bb).map(|(x, y)| x & y).collect::<Vec<_>>()
                && bits_of(&a.or(b)) == ab.iter().zip(&bb).map(|(x, y)| x | y).collect::<Vec<_>>()
                && bits_of(&a.xor(b)) == ab.iter().zip(&bb).map(|(x, y)| x ^ y).collect::<Vec<_>>()
                && a.shl_u(k) == from_bits(&ref_shift(&ab, k, false, false))
                && a.lshr_u(k) == from_bits(&ref_shift(&ab, k, true, false))
                && a.ashr_u(k) == from_bits(&ref_shift(&ab, k, true, msb))
                && a.shl(&kv) == a.shl_u(k)
                && a.lshr(&kv) == a.lshr_u(k)
                && a.ashr(&kv) == a.ashr_u(k)
                && a.popcount() == ab.iter().filter(|&&x| x).count() as u32
                && a.ucmp(b) == ucmp_ref
                && a.is_zero() != ab.iter().any(|&x| x)
                && valid(&a.shl_u(k))
                && valid(&a.lshr_u(k))
                && valid(&a.ashr_u(k))
                && valid(&a.neg())
        }
        qc_n(300, prop as fn(Wide, u32) -> bool);
    }

    /// Shift-and-add multiplication built from ops checked above.
    fn ref_mul(a: &BitVec, b: &BitVec) -> BitVec {
        let mut acc = BitVec::zero(a.width());
        for i in 0..b.width() {
            if b.bit(i) {
                acc = acc.add(&a.shl_u(u64::from(i)));
            }
        }
        acc
    }

    #[test]
    fn qc_wide_mul() {
        fn prop(t: Wide, k: u32) -> bool {
            let (a, b, c) = (&t.a, &t.b, &t.c);
            let w = a.width();
            let k = 1 + k % w;
            let p = a.mul(b);
            let one = BitVec::from_u64(w, 1);
            let pow = BitVec::zero(w).add(&one).shl_u(u64::from(k - 1));
            valid(&p)
                && p == ref_mul(a, b)
                && p == b.mul(a)
                && p.truncate(k) == a.truncate(k).mul(&b.truncate(k))
                && a.mul(&b.add(c)) == p.add(&a.mul(c))
                && a.mul(&one) == *a
                && a.mul(&BitVec::ones(w)) == a.neg()
                && a.mul(&pow) == a.shl_u(u64::from(k - 1))
                && p.to_u128() == a.to_u128().wrapping_mul(b.to_u128()) & mask(w)
        }
        qc_n(60, prop as fn(Wide, u32) -> bool);
    }

    #[test]
    fn qc_wide_identities() {
        fn prop(t: Wide, k: u32, r: u32) -> bool {
            let (a, b) = (&t.a, &t.b);
            let w = a.width();
            let k = k % w;
            let ku = u64::from(k);
            let shl_lshr = a.shl_u(ku).lshr_u(ku);
            let cleared = if k == 0 {
                a.clone()
            } else {
                a.truncate(w - k).zext(w)
            };
            let signed_ref = if a.msb() != b.msb() {
                a.msb()
            } else {
                a.ult(b)
            };
            let neg_ok = a.add(&a.neg()).is_zero() && a.neg().neg() == *a;
            a.add(b).sub(b) == *a
                && a.sub(b).add(b) == *a
                && a.xor(b).xor(b) == *a
                && a.not().not() == *a
                && a.sub(b) == a.add(&b.neg())
                && shl_lshr == cleared
                && a.lshr_u(ku).shl_u(ku) == a.and(&BitVec::ones(w).shl_u(ku))
                && a.slt(b) == signed_ref
                && a.sle(b) == (signed_ref || a == b)
                && a.ult(b) == b.ucmp(a).is_gt()
                && a.ule(b) != b.ult(a)
                && neg_ok
                && {
                    // concat / extract round trip at a random split (w >= 65 here).
                    let split = 1 + r % (w - 1);
                    let hi = a.extract(w - 1, split);
                    let lo = a.extract(split - 1, 0);
                    BitVec::concat(&hi, &lo) == *a
                        && hi == a.lshr_u(u64::from(split)).truncate(w - split)
                        && lo == a.truncate(split)
                }
        }
        qc_n(400, prop as fn(Wide, u32, u32) -> bool);
    }

    /// Two values of independent widths whose concatenation still fits.
    #[derive(Clone, Debug)]
    struct Pair {
        a: BitVec,
        b: BitVec,
    }

    impl Arbitrary for Pair {
        fn arbitrary(g: &mut Gen) -> Self {
            let w1 = if bool::arbitrary(g) {
                wide_width(g)
            } else {
                u32_in(g, 1, 128)
            };
            let w1 = w1.min(MAX_WIDTH - 1);
            let w2 = u32_in(g, 1, MAX_WIDTH - w1);
            let (w1, w2) = if bool::arbitrary(g) {
                (w1, w2)
            } else {
                (w2, w1)
            };
            Pair {
                a: random_wide(g, w1),
                b: random_wide(g, w2),
            }
        }
    }

    #[test]
    fn qc_wide_concat_ext_sat() {
        fn prop(p: Pair, t: u32) -> bool {
            let (a, b) = (p.a, p.b);
            let (w1, w2) = (a.width(), b.width());
            let c = BitVec::concat(&a, &b);
            let w = w1 + w2;
            let big = w1.max(w2) + t % (MAX_WIDTH - w1.max(w2) + 1);
            let ae = a.sext(big);
            let az = a.zext(big);
            let sign_hi_ok = if big > w1 {
                let expect = if a.msb() {
                    BitVec::ones(big - w1)
                } else {
                    BitVec::zero(big - w1)
                };
                ae.extract(big - 1, w1) == expect && az.extract(big - 1, w1).is_zero()
            } else {
                true
            };
            let to = 1 + t % MAX_WIDTH;
            let sat_ok = sat_matches_reference(&a, to);
            valid(&c)
                && c.width() == w
                && c.extract(w - 1, w2) == a
                && c.extract(w2 - 1, 0) == b
                && c.lshr_u(u64::from(w2)).truncate(w1) == a
                && c.truncate(w2) == b
                && ae.extract(w1 - 1, 0) == a
                && az.extract(w1 - 1, 0) == a
                && ae.truncate(w1) == a
                && sign_hi_ok
                && ae.slt(&BitVec::zero(big)) == a.msb()
                && sat_ok
        }
        qc_n(300, prop as fn(Pair, u32) -> bool);
    }

    /// Saturation checked against clamping expressed with wide comparisons.
    fn sat_matches_reference(a: &BitVec, to: u32) -> bool {
        let w = a.width();
        let (s_ref, u_ref, su_ref) = if to >= w {
            let su = if a.msb() {
                BitVec::zero(to)
            } else {
                a.zext(to)
            };
            (a.sext(to), a.zext(to), su)
        } else {
            let smin = BitVec::signed_min(to).sext(w);
            let smax = BitVec::signed_max(to).sext(w);
            let umax = BitVec::unsigned_max(to).zext(w);
            let s_ref = if a.slt(&smin) {
                BitVec::signed_min(to)
            } else if smax.slt(a) {
                BitVec::signed_max(to)
            } else {
                a.truncate(to)
            };
            let u_ref = if umax.ult(a) {
                BitVec::unsigned_max(to)
            } else {
                a.truncate(to)
            };
            let su_ref = if a.msb() {
                BitVec::zero(to)
            } else {
                u_ref.clone()
            };
            (s_ref, u_ref, su_ref)
        };
        let (s, u, su) = (
            a.sat_signed(to),
            a.sat_unsigned(to),
            a.sat_signed_to_unsigned(to),
        );
        valid(&s) && valid(&u) && valid(&su) && s == s_ref && u == u_ref && su == su_ref
    }

    /// A wide value placed right at a saturation boundary for `to` bits.
    #[derive(Clone, Debug)]
    struct SatCase {
        a: BitVec,
        to: u32,
    }

    impl Arbitrary for SatCase {
        fn arbitrary(g: &mut Gen) -> Self {
            let w = wide_width(g).max(129);
            let to = if bool::arbitrary(g) {
                u32_in(g, 1, 130)
            } else {
                u32_in(g, 1, w)
            };
            let t = to.min(w);
            let k = BitVec::from_u64(w, u64::from(u8::arbitrary(g) % 3));
            let a = match u8::arbitrary(g) % 6 {
                0 => random_wide(g, t).sext(w),
                1 => random_wide(g, t).zext(w),
                2 => BitVec::signed_max(t).sext(w).add(&k),
                3 => BitVec::signed_min(t).sext(w).sub(&k),
                4 => BitVec::unsigned_max(t).zext(w).add(&k),
                _ => random_wide(g, w),
            };
            SatCase { a, to }
        }
    }

    #[test]
    fn qc_wide_saturation_boundaries() {
        fn prop(c: SatCase) -> bool {
            sat_matches_reference(&c.a, c.to)
        }
        qc_n(1000, prop as fn(SatCase) -> bool);
    }

    // ----- deterministic edges -----------------------------------------------

    #[test]
    fn width_one() {
        let z = BitVec::zero(1);
        let o = BitVec::ones(1);
        assert_eq!(o.add(&o), z);
        assert_eq!(z.sub(&o), o);
        assert_eq!(o.mul(&o), o);
        assert_eq!(o.neg(), o);
        assert!(o.slt(&z));
        assert!(z.ult(&o));
        assert_eq!(BitVec::signed_min(1), o);
        assert_eq!(BitVec::signed_max(1), z);
        assert_eq!(o.sext(8), BitVec::from_u64(8, 0xff));
        assert_eq!(o.zext(8), BitVec::from_u64(8, 1));
        assert_eq!(o.ashr_u(5), o);
        assert_eq!(o.lshr_u(1), z);
        assert_eq!(o.to_hex(), "0x1");
        assert_eq!(o.sat_signed_to_unsigned(8), BitVec::zero(8));
        assert_eq!(BitVec::from_i128(1, -1), o);
        assert_eq!(BitVec::from_u64(8, 0xff).sat_signed(1), o);
        assert_eq!(BitVec::from_u64(8, 0x7f).sat_signed(1), z);
        assert_eq!(BitVec::from_u64(8, 0x02).sat_unsigned(1), o);
        assert_eq!(BitVec::concat(&o, &z), BitVec::from_u64(2, 2));
        assert_eq!(o.to_bytes_le(), vec![1]);
    }

    #[test]
    fn width_64_and_65() {
        let m64 = BitVec::ones(64);
        assert_eq!(m64.add(&BitVec::from_u64(64, 1)), BitVec::zero(64));
        assert_eq!(m64.to_u64(), u64::MAX);
        assert_eq!(m64.limbs().len(), 1);
        assert_eq!(m64.to_hex(), format!("0x{}", "f".repeat(16)));
        assert_eq!(
            m64.zext(65).add(&BitVec::from_u64(65, 1)),
            BitVec::from_u128(65, 1 << 64)
        );
        let m65 = BitVec::ones(65);
        assert_eq!(m65.limbs(), &[u64::MAX, 1]);
        assert_eq!(m65.add(&BitVec::from_u64(65, 1)), BitVec::zero(65));
        assert_eq!(m65.to_hex(), format!("0x1{}", "f".repeat(16)));
        assert_eq!(BitVec::signed_min(65).limbs(), &[0, 1]);
        assert_eq!(BitVec::signed_min(65).ashr_u(64), m65);
        assert_eq!(BitVec::signed_min(65).lshr_u(64), BitVec::from_u64(65, 1));
        assert_eq!(BitVec::from_u64(65, 1).shl_u(64), BitVec::signed_min(65));
        assert_eq!(m65.as_small_u64(), None);
        assert_eq!(m65.lshr_u(1).as_small_u64(), Some(u64::MAX));
        assert_eq!(m65.to_bytes_le().len(), 9);
        assert_eq!(m65.extract(64, 1), BitVec::ones(64));
        assert_eq!(
            BitVec::signed_min(64).sat_signed(65),
            BitVec::from_i128(65, i128::from(i64::MIN))
        );
        assert_eq!(BitVec::from_i128(65, -1).sat_signed(64), BitVec::ones(64));
        assert_eq!(
            BitVec::signed_min(65).sat_signed(64),
            BitVec::signed_min(64)
        );
        assert_eq!(
            BitVec::signed_max(65).sat_signed(64),
            BitVec::signed_max(64)
        );
        assert_eq!(m65.sat_unsigned(64), m64);
        assert_eq!(BitVec::signed_max(65).sat_signed_to_unsigned(64), m64);
    }

    #[test]
    fn the_widest_width() {
        const W: u32 = MAX_WIDTH;
        let ones = BitVec::ones(W);
        let one = BitVec::from_u64(W, 1);
        assert_eq!(ones.add(&one), BitVec::zero(W));
        assert_eq!(BitVec::zero(W).sub(&one), ones);
        assert_eq!(ones.mul(&ones), one);
        assert_eq!(ones.popcount(), W);
        assert_eq!(ones.to_hex().len(), 2 + W as usize / 4);
        assert_eq!(ones.to_bytes_le(), vec![0xff; W as usize / 8]);
        assert_eq!(BitVec::signed_min(W).ashr_u(u64::from(W) - 1), ones);
        assert_eq!(one.shl_u(u64::from(W) - 1), BitVec::signed_min(W));
        assert_eq!(one.shl_u(u64::from(W)), BitVec::zero(W));
        assert!(BitVec::signed_min(W).slt(&BitVec::signed_max(W)));
        assert!(BitVec::signed_max(W).ult(&BitVec::signed_min(W)));
        assert_eq!(
            BitVec::concat(&BitVec::ones(W / 2), &BitVec::zero(W / 2)),
            ones.shl_u(u64::from(W / 2))
        );
        assert_eq!(ones.sat_signed(8), BitVec::ones(8));
        assert_eq!(ones.sat_unsigned(8), BitVec::ones(8));
        assert_eq!(ones.sat_signed_to_unsigned(8), BitVec::zero(8));
    }

    #[test]
    fn huge_shift_amounts() {
        let x = BitVec::from_u64(32, 0x8000_0001);
        let mut big = BitVec::zero(300);
        big.set_bit(299, true);
        assert_eq!(x.shl(&big), BitVec::zero(32));
        assert_eq!(x.lshr(&big), BitVec::zero(32));
        assert_eq!(x.ashr(&big), BitVec::ones(32));
        assert_eq!(x.ashr(&BitVec::from_u64(8, 31)), BitVec::ones(32));
        assert_eq!(x.ashr(&BitVec::from_u64(8, 32)), BitVec::ones(32));
        assert_eq!(
            x.lshr(&BitVec::from_u64(1, 1)),
            BitVec::from_u64(32, 0x4000_0000)
        );
        assert_eq!(x.shl_u(u64::MAX), BitVec::zero(32));
        assert_eq!(x.ashr_u(u64::MAX), BitVec::ones(32));
    }

    #[test]
    fn small_values_stay_inline() {
        let a = BitVec::from_u128(128, u128::MAX);
        assert!(!a.limbs.spilled());
        assert!(!a.mul(&a).limbs.spilled());
        assert!(!a.shl_u(3).limbs.spilled());
        assert!(
            !BitVec::concat(&a.extract(63, 0), &a.extract(127, 64))
                .limbs
                .spilled()
        );
    }

    #[test]
    #[should_panic(expected = "width mismatch")]
    fn mismatch_panics() {
        let _ = BitVec::zero(8).add(&BitVec::zero(16));
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn extract_out_of_range_panics() {
        let _ = BitVec::zero(8).extract(8, 0);
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn zero_width_panics() {
        let _ = BitVec::zero(0);
    }
}
