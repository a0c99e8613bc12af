//! Halide value types: `int16`, `uint8x64`, `uint1` (bool), `(void *)`.
//!
//! A type is an element kind, a bit width and a lane count. Handles (pointers)
//! keep the C type Halide printed for them (`struct halide_buffer_t *`) so the
//! printer can reproduce it; the checks in `infer` treat all handles alike.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// The element kind of a [`Type`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeCode {
    Int,
    UInt,
    Float,
    /// Halide's `UInt(1)`, printed `uint1`.
    Bool,
    /// An opaque pointer, 64 bits.
    Handle(HandleName),
}

/// The C spelling of a handle type without its parentheses, e.g.
/// `struct halide_buffer_t *` or `void *`. Interned, so `Type` stays `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandleName(&'static str);

impl HandleName {
    pub fn new(spelling: &str) -> Self {
        static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
        let mut names = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = names.get(spelling) {
            return HandleName(s);
        }
        let s: &'static str = Box::leak(spelling.to_string().into_boxed_str());
        names.insert(s);
        HandleName(s)
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl fmt::Debug for HandleName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

/// A Halide type: element kind, bits per lane, lanes (1 for a scalar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    pub code: TypeCode,
    pub bits: u8,
    pub lanes: u32,
}

impl Type {
    pub const fn int(bits: u8) -> Self {
        Type { code: TypeCode::Int, bits, lanes: 1 }
    }
    pub const fn uint(bits: u8) -> Self {
        Type { code: TypeCode::UInt, bits, lanes: 1 }
    }
    pub const fn float(bits: u8) -> Self {
        Type { code: TypeCode::Float, bits, lanes: 1 }
    }
    pub const fn bool() -> Self {
        Type { code: TypeCode::Bool, bits: 1, lanes: 1 }
    }
    /// A handle spelled `(spelling)`, e.g. `Type::handle("void *")`.
    pub fn handle(spelling: &str) -> Self {
        Type { code: TypeCode::Handle(HandleName::new(spelling)), bits: 64, lanes: 1 }
    }
    pub const I32: Type = Type::int(32);

    pub fn with_lanes(self, lanes: u32) -> Self {
        Type { lanes, ..self }
    }
    /// The scalar type of one lane.
    pub fn element(self) -> Self {
        self.with_lanes(1)
    }
    /// The same lanes, `bits` wide, of kind `code`.
    pub fn with_code(self, code: TypeCode) -> Self {
        Type { code, ..self }
    }
    pub fn with_bits(self, bits: u8) -> Self {
        Type { bits, ..self }
    }
    pub fn is_scalar(self) -> bool {
        self.lanes == 1
    }
    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }
    pub fn is_int(self) -> bool {
        self.code == TypeCode::Int
    }
    pub fn is_uint(self) -> bool {
        self.code == TypeCode::UInt
    }
    /// `Int` or `UInt` (not `Bool`).
    pub fn is_int_or_uint(self) -> bool {
        matches!(self.code, TypeCode::Int | TypeCode::UInt)
    }
    pub fn is_float(self) -> bool {
        self.code == TypeCode::Float
    }
    pub fn is_bool(self) -> bool {
        self.code == TypeCode::Bool
    }
    pub fn is_handle(self) -> bool {
        matches!(self.code, TypeCode::Handle(_))
    }
    /// Equal, except that any two handles of the same lanes match.
    pub fn matches(self, other: Type) -> bool {
        self == other || (self.is_handle() && other.is_handle() && self.lanes == other.lanes)
    }
    /// Bits of all lanes together.
    pub fn total_bits(self) -> u64 {
        self.bits as u64 * self.lanes as u64
    }
    /// Whether this is a type Halide can form: int 8..64, uint 1..64, float
    /// 16..64, handle 64, and at least one lane.
    pub fn is_valid(self) -> bool {
        let bits_ok = match self.code {
            TypeCode::Int | TypeCode::UInt => matches!(self.bits, 8 | 16 | 32 | 64),
            TypeCode::Float => matches!(self.bits, 16 | 32 | 64),
            TypeCode::Bool => self.bits == 1,
            TypeCode::Handle(_) => self.bits == 64,
        };
        bits_ok && self.lanes >= 1
    }

    /// Parses a type word: `int32`, `uint8x64`, `uint1`, `float16x8`. Handles
    /// are spelled in parentheses and parsed by the parser.
    pub fn from_word(word: &str) -> Option<Type> {
        let (code, rest) = if let Some(r) = word.strip_prefix("uint") {
            (TypeCode::UInt, r)
        } else if let Some(r) = word.strip_prefix("int") {
            (TypeCode::Int, r)
        } else if let Some(r) = word.strip_prefix("float") {
            (TypeCode::Float, r)
        } else {
            return None;
        };
        let (bits, lanes) = match rest.split_once('x') {
            Some((b, l)) => (b, Some(l)),
            None => (rest, None),
        };
        let bits: u8 = parse_digits(bits)?.try_into().ok()?;
        let lanes = match lanes {
            Some(l) => parse_digits(l)?.try_into().ok()?,
            None => 1,
        };
        let code = if code == TypeCode::UInt && bits == 1 { TypeCode::Bool } else { code };
        let t = Type { code, bits, lanes };
        t.is_valid().then_some(t)
    }

    /// Decodes a `halide_type_t` as packed into a buffer's `.type` field:
    /// `code | bits << 8 | lanes << 16`, codes 0 int, 1 uint, 2 float, 3 handle.
    pub fn from_buffer_code(packed: u64) -> Option<Type> {
        let (code, bits, lanes) = (packed & 0xff, (packed >> 8) & 0xff, packed >> 16);
        let code = match (code, bits) {
            (0, _) => TypeCode::Int,
            (1, 1) => TypeCode::Bool,
            (1, _) => TypeCode::UInt,
            (2, _) => TypeCode::Float,
            (3, _) => TypeCode::Handle(HandleName::new("void *")),
            _ => return None,
        };
        let t = Type { code, bits: bits as u8, lanes: lanes.try_into().ok()? };
        t.is_valid().then_some(t)
    }

    /// Whether `value` is representable in this (integer or bool) element type.
    pub fn holds(self, value: i128) -> bool {
        match self.code {
            TypeCode::Bool => value == 0 || value == 1,
            TypeCode::UInt => value >= 0 && value < (1i128 << self.bits),
            TypeCode::Int => {
                let half = 1i128 << (self.bits - 1);
                value >= -half && value < half
            }
            TypeCode::Float => true,
            TypeCode::Handle(_) => false,
        }
    }
}

/// `v` rounded to the nearest float of `bits` bits (ties to even), as f64.
pub fn round_float(v: f64, bits: u8) -> f64 {
    match bits {
        32 => v as f32 as f64,
        16 => round_f16(v),
        _ => v,
    }
}

fn round_f16(v: f64) -> f64 {
    let a = v.abs();
    if !a.is_finite() || a == 0.0 {
        return v;
    }
    if a >= 65520.0 {
        return f64::INFINITY.copysign(v);
    }
    // float16 has 10 fraction bits; below 2^-14 the spacing stays 2^-24.
    let exp = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let step = 2f64.powi(exp.max(-14) - 10);
    ((a / step).round_ties_even() * step).copysign(v)
}

fn parse_digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    s.parse().ok()
}

/// Halide's spelling: `int32`, `uint8x64`, `uint1`, `(void *)`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            TypeCode::Int => write!(f, "int{}", self.bits)?,
            TypeCode::UInt | TypeCode::Bool => write!(f, "uint{}", self.bits)?,
            TypeCode::Float => write!(f, "float{}", self.bits)?,
            TypeCode::Handle(h) => write!(f, "({})", h.as_str())?,
        }
        if self.lanes > 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}
