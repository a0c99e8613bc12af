//! The benchmark manifest (`benchmarks/manifest.json`, written by
//! `benchmarks/generate.py`): for each kernel, the function Halide compiled
//! and its arguments with types, buffer sizes and scalar values.
//!
//! ```text
//! { "halide": "21.0.0", "target": "x86-64-linux-avx512_skylake-no_runtime",
//!   "kernels": {
//!     "sobel3x3": { "function": "sobel3x3", "args": [
//!       {"name": "input", "kind": "buffer", "type": "uint8", "dims": [2050, 1538], "output": false},
//!       {"name": "k", "kind": "scalar", "type": "int32", "value": 3, "output": false},
//!       {"name": "output", "kind": "buffer", "type": "uint8", "dims": [2048, 1536], "output": true} ] } } }
//! ```
//!
//! `kernels` may also be an array of kernels that each carry a `"name"`.
//! Every error names `file:line:col` and what was expected there. The JSON
//! reader is our own so that every value keeps its position; it accepts
//! RFC 8259 JSON nested at most [`MAX_DEPTH`] deep.
//!
//! The names end up in generated C (function names, file names in string
//! literals), so they must be C identifiers; sizes end up as allocations,
//! so a buffer holds at most [`MAX_ELEMENTS`] elements.

use crate::stmt::types::Type;
use std::collections::HashSet;
use std::fmt;

/// Arrays and objects nest at most this deep (the manifest needs 4).
pub const MAX_DEPTH: usize = 32;
/// A buffer holds at most this many elements (2^28; the largest benchmark
/// buffer has about 3.2 million).
pub const MAX_ELEMENTS: i64 = 1 << 28;
/// A buffer has at most this many dimensions (Halide's own limit is 16; the
/// benchmarks use up to 4).
pub const MAX_DIMS: usize = 16;

#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    /// The Halide release that generated it, e.g. `21.0.0`.
    pub halide: Option<String>,
    /// Halide's target string.
    pub target: Option<String>,
    /// In file order.
    pub kernels: Vec<Kernel>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    pub name: String,
    /// The symbol of Halide's AOT function (defaults to the kernel name).
    pub function: String,
    pub args: Vec<ArgSpec>,
}

/// One argument of a kernel, in call order.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgSpec {
    pub name: String,
    /// A `halide_buffer_t *`; otherwise a scalar.
    pub buffer: bool,
    pub ty: Type,
    /// A buffer's extents, innermost first (empty for a scalar).
    pub dims: Vec<i64>,
    /// A buffer's minimum coordinates (all zero unless the manifest says).
    pub min: Vec<i64>,
    /// A scalar's value (0 for a buffer).
    pub value: i64,
    /// The output buffer.
    pub output: bool,
}

impl ArgSpec {
    /// The number of elements of a buffer (1 for a scalar); at most
    /// [`MAX_ELEMENTS`], so this never overflows.
    pub fn elements(&self) -> usize {
        self.dims.iter().product::<i64>().max(0) as usize
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: error: {}", self.file, self.line, self.col, self.message)
    }
}

impl std::error::Error for ManifestError {}

/// Reads `<suite>/manifest.json`.
pub fn load_manifest(path: &std::path::Path) -> Result<Manifest, ManifestError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ManifestError { file: file.clone(), line: 1, col: 1, message: format!("cannot read the manifest: {e}") })?;
    parse_manifest(&file, &text)
}

/// Parses a manifest; `file` names it in errors.
pub fn parse_manifest(file: &str, text: &str) -> Result<Manifest, ManifestError> {
    let mut r = Reader { file, src: text.as_bytes(), pos: 0, line: 1, col: 1 };
    r.ws();
    let root = r.value(0)?;
    r.ws();
    if r.pos < r.src.len() {
        return Err(r.err_here("expected the end of the file after the top-level object"));
    }
    let cx = Cx { file };
    cx.manifest(&root)
}

// ---------------------------------------------------------------- JSON ---

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    line: u32,
    col: u32,
}

#[derive(Debug)]
enum Json {
    Null,
    Bool(bool),
    /// The literal as written; integers are read from it on demand.
    Num(String),
    Str(String),
    Arr(Vec<Val>),
    /// In file order, with each key's own position.
    Obj(Vec<(String, Pos, Val)>),
}

#[derive(Debug)]
struct Val {
    pos: Pos,
    json: Json,
}

impl Json {
    fn describe(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Num(_) => "a number",
            Json::Str(_) => "a string",
            Json::Arr(_) => "an array",
            Json::Obj(_) => "an object",
        }
    }
}

struct Reader<'a> {
    file: &'a str,
    src: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
}

type R<T> = Result<T, ManifestError>;

impl Reader<'_> {
    fn here(&self) -> Pos {
        Pos { line: self.line, col: self.col }
    }
    fn err_at(&self, p: Pos, message: impl Into<String>) -> ManifestError {
        ManifestError { file: self.file.to_string(), line: p.line, col: p.col, message: message.into() }
    }
    fn err_here(&self, message: &str) -> ManifestError {
        let found = match self.peek() {
            None => "the end of the file".to_string(),
            Some(_) => {
                let rest = std::str::from_utf8(&self.src[self.pos..]).map(|s| s.chars().next().unwrap_or(' ')).unwrap_or('?');
                format!("`{}`", rest.escape_debug())
            }
        };
        self.err_at(self.here(), format!("{message}, found {found}"))
    }
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }
    /// Advances over one byte; columns count characters, not bytes.
    fn bump(&mut self) {
        let b = self.src[self.pos];
        self.pos += 1;
        if b == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if b & 0xC0 != 0x80 {
            self.col += 1;
        }
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.bump();
        }
    }
    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> R<Val> {
        let pos = self.here();
        let json = match self.peek() {
            Some(b'{') | Some(b'[') if depth >= MAX_DEPTH => {
                return Err(self.err_at(pos, format!("arrays and objects nested more than {MAX_DEPTH} deep")));
            }
            Some(b'{') => {
                self.bump();
                let mut fields = Vec::new();
                self.ws();
                if !self.eat(b'}') {
                    loop {
                        self.ws();
                        let kpos = self.here();
                        if self.peek() != Some(b'"') {
                            return Err(self.err_here("expected a quoted key"));
                        }
                        let key = self.string()?;
                        self.ws();
                        if !self.eat(b':') {
                            return Err(self.err_here("expected `:` after a key"));
                        }
                        self.ws();
                        let v = self.value(depth + 1)?;
                        fields.push((key, kpos, v));
                        self.ws();
                        if self.eat(b'}') {
                            break;
                        }
                        if !self.eat(b',') {
                            return Err(self.err_here("expected `,` or `}` in an object"));
                        }
                    }
                }
                Json::Obj(fields)
            }
            Some(b'[') => {
                self.bump();
                let mut items = Vec::new();
                self.ws();
                if !self.eat(b']') {
                    loop {
                        self.ws();
                        items.push(self.value(depth + 1)?);
                        self.ws();
                        if self.eat(b']') {
                            break;
                        }
                        if !self.eat(b',') {
                            return Err(self.err_here("expected `,` or `]` in an array"));
                        }
                    }
                }
                Json::Arr(items)
            }
            Some(b'"') => Json::Str(self.string()?),
            Some(b'-' | b'0'..=b'9') => Json::Num(self.number()?),
            Some(b't' | b'f' | b'n') => {
                for (word, v) in [("true", Json::Bool(true)), ("false", Json::Bool(false)), ("null", Json::Null)] {
                    if self.src[self.pos..].starts_with(word.as_bytes()) {
                        for _ in 0..word.len() {
                            self.bump();
                        }
                        return Ok(Val { pos, json: v });
                    }
                }
                return Err(self.err_here("expected a JSON value (object, array, string, number, true, false or null)"));
            }
            _ => return Err(self.err_here("expected a JSON value (object, array, string, number, true, false or null)")),
        };
        Ok(Val { pos, json })
    }

    fn number(&mut self) -> R<String> {
        let start = self.pos;
        let pos = self.here();
        self.eat(b'-');
        let digits = |r: &mut Self| {
            let s = r.pos;
            while matches!(r.peek(), Some(b'0'..=b'9')) {
                r.bump();
            }
            r.pos - s
        };
        let int_start = self.pos;
        let n = digits(self);
        if n == 0 || (n > 1 && self.src[int_start] == b'0') {
            return Err(self.err_at(pos, "malformed number: expected digits without leading zeros"));
        }
        if self.eat(b'.') && digits(self) == 0 {
            return Err(self.err_here("malformed number: expected digits after `.`"));
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.bump();
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if digits(self) == 0 {
                return Err(self.err_here("malformed number: expected digits in the exponent"));
            }
        }
        Ok(String::from_utf8_lossy(&self.src[start..self.pos]).into_owned())
    }

    fn string(&mut self) -> R<String> {
        let open = self.here();
        self.bump();
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(b) = self.peek() else {
                return Err(self.err_at(open, "unterminated string: expected a closing `\"`"));
            };
            match b {
                b'"' => {
                    self.bump();
                    break;
                }
                b'\\' => {
                    let at = self.here();
                    self.bump();
                    let Some(e) = self.peek() else {
                        return Err(self.err_at(open, "unterminated string: expected a closing `\"`"));
                    };
                    self.bump();
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4(at)?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !(self.eat(b'\\') && self.eat(b'u')) {
                                    return Err(self.err_at(at, "expected a low surrogate `\\uDC00`..`\\uDFFF` after a high surrogate"));
                                }
                                let lo = self.hex4(at)?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err_at(at, "expected a low surrogate `\\uDC00`..`\\uDFFF` after a high surrogate"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            char::from_u32(cp).ok_or_else(|| self.err_at(at, format!("`\\u{cp:04X}` is not a character (a lone surrogate)")))?
                        }
                        _ => return Err(self.err_at(at, "unknown escape: expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                0x00..=0x1F => return Err(self.err_here("control character in a string: expected it escaped (e.g. `\\n`)")),
                _ => {
                    out.push(b);
                    self.bump();
                }
            }
        }
        // The input is a `&str`, and escapes add whole characters.
        String::from_utf8(out).map_err(|_| self.err_at(open, "string is not UTF-8"))
    }

    fn hex4(&mut self, at: Pos) -> R<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self.peek().and_then(|b| (b as char).to_digit(16)).ok_or_else(|| self.err_at(at, "expected four hex digits after `\\u`"))?;
            self.bump();
            v = v * 16 + d;
        }
        Ok(v)
    }
}

// ----------------------------------------------------------- manifest ---

struct Cx<'a> {
    file: &'a str,
}

impl Cx<'_> {
    fn err(&self, p: Pos, message: impl Into<String>) -> ManifestError {
        ManifestError { file: self.file.to_string(), line: p.line, col: p.col, message: message.into() }
    }

    /// The fields of an object, every key one of `allowed` and none twice.
    fn fields<'v>(&self, v: &'v Val, what: &str, allowed: &[&str]) -> R<Vec<(&'v str, Pos, &'v Val)>> {
        let Json::Obj(fields) = &v.json else {
            return Err(self.err(v.pos, format!("expected {what} (an object), found {}", v.json.describe())));
        };
        let mut out: Vec<(&str, Pos, &Val)> = Vec::new();
        for (k, kp, x) in fields {
            if !allowed.contains(&k.as_str()) {
                let list: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
                return Err(self.err(*kp, format!("unknown key {k:?} in {what}; expected one of {}", list.join(", "))));
            }
            // At most `allowed.len()` keys get here, so this search is short.
            if let Some((_, first, _)) = out.iter().find(|(n, _, _)| n == k) {
                return Err(self.err(*kp, format!("key {k:?} appears twice in {what} (first at {}:{})", first.line, first.col)));
            }
            out.push((k, *kp, x));
        }
        Ok(out)
    }

    fn get<'v>(fields: &[(&str, Pos, &'v Val)], key: &str) -> Option<&'v Val> {
        fields.iter().find(|(k, _, _)| *k == key).map(|(_, _, v)| *v)
    }

    fn require<'v>(&self, fields: &[(&str, Pos, &'v Val)], key: &str, what: &str, at: Pos) -> R<&'v Val> {
        Self::get(fields, key).ok_or_else(|| self.err(at, format!("{what} lacks the key \"{key}\"")))
    }

    fn string<'v>(&self, v: &'v Val, what: &str) -> R<&'v str> {
        match &v.json {
            Json::Str(s) => Ok(s),
            other => Err(self.err(v.pos, format!("expected {what} (a string), found {}", other.describe()))),
        }
    }

    /// A C identifier: it is spliced into generated C.
    fn ident<'v>(&self, v: &'v Val, what: &str) -> R<&'v str> {
        let s = self.string(v, what)?;
        let ok = s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && s.len() <= 255;
        if !ok {
            return Err(self.err(v.pos, format!("expected {what} to be a C identifier (letters, digits, `_`, not starting with a digit, at most 255 characters), found {s:?}")));
        }
        Ok(s)
    }

    fn bool(&self, v: &Val, what: &str) -> R<bool> {
        match &v.json {
            Json::Bool(b) => Ok(*b),
            other => Err(self.err(v.pos, format!("expected {what} (true or false), found {}", other.describe()))),
        }
    }

    fn int(&self, v: &Val, what: &str) -> R<i64> {
        match &v.json {
            Json::Num(s) => s.parse::<i64>().map_err(|_| self.err(v.pos, format!("expected {what} (an integer in the 64-bit range), found {s}"))),
            other => Err(self.err(v.pos, format!("expected {what} (an integer), found {}", other.describe()))),
        }
    }

    fn ints(&self, v: &Val, what: &str) -> R<Vec<(i64, Pos)>> {
        let Json::Arr(items) = &v.json else {
            return Err(self.err(v.pos, format!("expected {what} (an array of integers), found {}", v.json.describe())));
        };
        if items.len() > MAX_DIMS {
            return Err(self.err(v.pos, format!("{what} has {} entries; a buffer has at most {MAX_DIMS} dimensions", items.len())));
        }
        items.iter().map(|x| Ok((self.int(x, &format!("an entry of {what}"))?, x.pos))).collect()
    }

    fn manifest(&self, root: &Val) -> R<Manifest> {
        let fields = self.fields(root, "the manifest", &["halide", "target", "kernels"])?;
        let halide = Self::get(&fields, "halide").map(|v| self.string(v, "the Halide release")).transpose()?.map(str::to_string);
        let target = Self::get(&fields, "target").map(|v| self.string(v, "the Halide target")).transpose()?.map(str::to_string);
        let kv = self.require(&fields, "kernels", "the manifest", root.pos)?;
        let mut kernels: Vec<Kernel> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut push = |k: Kernel, at: Pos, kernels: &mut Vec<Kernel>| -> R<()> {
            if !names.insert(k.name.clone()) {
                return Err(self.err(at, format!("kernel `{}` appears twice", k.name)));
            }
            kernels.push(k);
            Ok(())
        };
        match &kv.json {
            Json::Obj(entries) => {
                for (name, kp, v) in entries {
                    let k = self.kernel(Some((name, *kp)), v)?;
                    push(k, *kp, &mut kernels)?;
                }
            }
            Json::Arr(items) => {
                for v in items {
                    let k = self.kernel(None, v)?;
                    push(k, v.pos, &mut kernels)?;
                }
            }
            other => return Err(self.err(kv.pos, format!("expected \"kernels\" to be an object (name: kernel) or an array of kernels, found {}", other.describe()))),
        }
        Ok(Manifest { halide, target, kernels })
    }

    fn kernel(&self, keyed: Option<(&str, Pos)>, v: &Val) -> R<Kernel> {
        let allowed: &[&str] = if keyed.is_some() { &["function", "args"] } else { &["name", "function", "args"] };
        let fields = self.fields(v, "a kernel", allowed)?;
        let name = match keyed {
            Some((n, p)) => {
                let ok = !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') && n.len() <= 255;
                if !ok {
                    return Err(self.err(p, format!("expected a kernel name of letters, digits and `_` (at most 255), found {n:?}")));
                }
                n.to_string()
            }
            None => self.ident(self.require(&fields, "name", "a kernel in an array", v.pos)?, "the kernel name")?.to_string(),
        };
        let function = match Self::get(&fields, "function") {
            Some(f) => self.ident(f, "the function name")?.to_string(),
            None if name.as_bytes()[0].is_ascii_digit() => return Err(self.err(v.pos, format!("kernel `{name}` needs a \"function\": its name is not a C identifier"))),
            None => name.clone(),
        };
        let av = self.require(&fields, "args", &format!("kernel `{name}`"), v.pos)?;
        let Json::Arr(items) = &av.json else {
            return Err(self.err(av.pos, format!("expected the args of kernel `{name}` (an array), found {}", av.json.describe())));
        };
        let mut args: Vec<ArgSpec> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        for a in items {
            let spec = self.arg(a)?;
            if !names.insert(spec.name.clone()) {
                return Err(self.err(a.pos, format!("kernel `{name}` has two arguments named `{}`", spec.name)));
            }
            args.push(spec);
        }
        if !args.iter().any(|a| a.output) {
            return Err(self.err(av.pos, format!("kernel `{name}` has no output buffer; expected one argument with \"output\": true")));
        }
        Ok(Kernel { name, function, args })
    }

    fn arg(&self, v: &Val) -> R<ArgSpec> {
        let fields = self.fields(v, "an argument", &["name", "kind", "type", "dims", "min", "value", "output"])?;
        let name = self.ident(self.require(&fields, "name", "an argument", v.pos)?, "the argument name")?.to_string();
        let what = format!("argument `{name}`");
        let kv = self.require(&fields, "kind", &what, v.pos)?;
        let buffer = match self.string(kv, "the kind")? {
            "buffer" => true,
            "scalar" => false,
            k => return Err(self.err(kv.pos, format!("expected the kind of {what} to be \"buffer\" or \"scalar\", found {k:?}"))),
        };
        let tv = self.require(&fields, "type", &what, v.pos)?;
        let ty = parse_type(self.string(tv, "the type")?).map_err(|m| self.err(tv.pos, m))?;
        let output = Self::get(&fields, "output").map(|o| self.bool(o, "\"output\"")).transpose()?.unwrap_or(false);
        let mut dims = Vec::new();
        let mut min = Vec::new();
        let mut value = 0;
        if buffer {
            if let Some(x) = Self::get(&fields, "value") {
                return Err(self.err(x.pos, format!("{what} is a buffer; a \"value\" belongs to a scalar")));
            }
            let dv = self.require(&fields, "dims", &format!("buffer {what}"), v.pos)?;
            let mut total: i64 = 1;
            for (d, p) in self.ints(dv, "\"dims\"")? {
                if !(1..=i32::MAX as i64).contains(&d) {
                    return Err(self.err(p, format!("expected an extent from 1 to {}, found {d}", i32::MAX)));
                }
                total = total.saturating_mul(d);
                if total > MAX_ELEMENTS {
                    return Err(self.err(dv.pos, format!("{what} would hold more than {MAX_ELEMENTS} elements, the most a benchmark buffer may")));
                }
                dims.push(d);
            }
            if let Some(mv) = Self::get(&fields, "min") {
                let m = self.ints(mv, "\"min\"")?;
                if m.len() != dims.len() {
                    return Err(self.err(mv.pos, format!("expected one \"min\" per dimension ({}), found {}", dims.len(), m.len())));
                }
                for (x, p) in m {
                    if !(i32::MIN as i64..=i32::MAX as i64).contains(&x) || x.checked_add(dims[min.len()]).is_none_or(|e| e > i32::MAX as i64) {
                        return Err(self.err(p, format!("expected a minimum coordinate that keeps the buffer inside the 32-bit range, found {x}")));
                    }
                    min.push(x);
                }
            } else {
                min = vec![0; dims.len()];
            }
        } else {
            for key in ["dims", "min"] {
                if let Some(x) = Self::get(&fields, key) {
                    return Err(self.err(x.pos, format!("{what} is a scalar; \"{key}\" belongs to a buffer")));
                }
            }
            if output {
                return Err(self.err(v.pos, format!("{what} is a scalar and cannot be the output; expected a buffer")));
            }
            let vv = self.require(&fields, "value", &format!("scalar {what}"), v.pos)?;
            value = self.int(vv, "the value")?;
            let bits = ty.bits as u32;
            let (lo, hi): (i128, i128) = if ty.is_int() { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) } else { (0, (1i128 << bits) - 1) };
            if !(lo..=hi).contains(&(value as i128)) {
                return Err(self.err(vv.pos, format!("value {value} does not fit in {what}'s type ({lo} to {hi})")));
            }
        }
        Ok(ArgSpec { name, buffer, ty, dims, min, value, output })
    }
}

/// `int8` .. `int64`, `uint8` .. `uint64`.
pub fn parse_type(s: &str) -> Result<Type, String> {
    let expected = "expected int8, int16, int32, int64, uint8, uint16, uint32 or uint64";
    let (unsigned, digits) = match s.strip_prefix("uint") {
        Some(d) => (true, d),
        None => match s.strip_prefix("int") {
            Some(d) => (false, d),
            None => return Err(format!("{expected}, found {s:?}")),
        },
    };
    let bits: u8 = match digits {
        "8" => 8,
        "16" => 16,
        "32" => 32,
        "64" => 64,
        _ => return Err(format!("{expected}, found {s:?}")),
    };
    Ok(if unsigned { Type::uint(bits) } else { Type::int(bits) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_manifest("m.json", text).unwrap_err().to_string()
    }

    const OK: &str = r#"{"halide": "21.0.0", "kernels": {"k": {"function": "k_fn", "args": [
        {"name": "input", "kind": "buffer", "type": "uint8", "dims": [4, 3], "output": false},
        {"name": "s", "kind": "scalar", "type": "int16", "value": -7, "output": false},
        {"name": "out", "kind": "buffer", "type": "int32", "dims": [4], "min": [2], "output": true}]}}}"#;

    #[test]
    fn reads_a_manifest() {
        let m = parse_manifest("m.json", OK).unwrap();
        assert_eq!(m.halide.as_deref(), Some("21.0.0"));
        let k = &m.kernels[0];
        assert_eq!((k.name.as_str(), k.function.as_str(), k.args.len()), ("k", "k_fn", 3));
        assert_eq!(k.args[0].dims, vec![4, 3]);
        assert_eq!(k.args[0].elements(), 12);
        assert_eq!(k.args[1].value, -7);
        assert_eq!(k.args[2].min, vec![2]);
        assert!(k.args[2].output);
    }

    #[test]
    fn reads_the_bundled_manifest() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../benchmarks/manifest.json");
        let m = load_manifest(&path).unwrap();
        assert!(m.kernels.len() >= 30, "{}", m.kernels.len());
    }

    /// Duplicate names are found with hash sets: 100,000 kernels of one
    /// argument each (a 10 MB manifest) took minutes when each kernel was
    /// compared with every earlier one.
    #[test]
    fn many_kernels_parse_in_linear_time() {
        let mut text = String::from("{\"kernels\": {");
        for i in 0..100_000 {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("\"k{i}\": {{\"args\": [{{\"name\": \"o\", \"kind\": \"buffer\", \"type\": \"uint8\", \"dims\": [1], \"output\": true}}]}}"));
        }
        text.push_str("}}");
        let t = std::time::Instant::now();
        assert_eq!(parse_manifest("m.json", &text).unwrap().kernels.len(), 100_000);
        assert!(t.elapsed() < std::time::Duration::from_secs(20), "{:?}", t.elapsed());
    }

    #[test]
    fn array_form() {
        let m = parse_manifest("m.json", r#"{"kernels": [{"name": "a", "args": [{"name": "o", "kind": "buffer", "type": "uint8", "dims": [1], "output": true}]}]}"#).unwrap();
        assert_eq!(m.kernels[0].function, "a");
    }

    #[test]
    fn errors_name_the_place_and_what_was_expected() {
        assert_eq!(err("{\"kernels\": {}"), "m.json:1:15: error: expected `,` or `}` in an object, found the end of the file");
        assert_eq!(err("{\"kernels\": [1,]}"), "m.json:1:16: error: expected a JSON value (object, array, string, number, true, false or null), found `]`");
        assert!(err(&"[".repeat(100)).contains(&format!("nested more than {MAX_DEPTH} deep")));
        assert!(err(r#"{"kernels": {"k": {"args": [{"name": "o", "kind": "buffer", "type": "uint8", "dims": [1], "ouput": true}]}}}"#)
            .starts_with("m.json:1:91: error: unknown key \"ouput\" in an argument"));
        assert!(err(r#"{"kernels": {"k": {"args": [{"name": "o", "kind": "buffer", "type": "uint7", "dims": [1], "output": true}]}}}"#)
            .contains("1:69: error: expected int8"));
        assert!(err(r#"{"kernels": {"k": {"args": [{"name": "o", "kind": "buffer", "type": "uint8", "dims": [65536, 65536], "output": true}]}}}"#)
            .contains(&format!("more than {MAX_ELEMENTS} elements")));
        assert!(err(r#"{"kernels": {"k": {"args": [{"name": "o", "kind": "scalar", "type": "uint8", "value": 256}]}}}"#).contains("does not fit"));
        assert!(err(r#"{"kernels": {"k": {"args": [{"name": "o\"; system(x); //", "kind": "buffer", "type": "uint8", "dims": [1], "output": true}]}}}"#)
            .contains("C identifier"));
        assert!(err(r#"{"kernels": {"k": {"args": []}}}"#).contains("no output buffer"));
        assert!(err("{\"kernels\": {}}\n\n  x").starts_with("m.json:3:3: error: expected the end of the file"));
        assert!(err("{\"kernels\": \"\\ud800\"}").contains("low surrogate"));
    }
}
