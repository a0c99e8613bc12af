//! Tokens of Halide's Stmt text.
//!
//! Newlines are not tokens, but every token records whether it starts a line:
//! Halide prints each statement on its own line and never breaks an
//! expression before an operator, so the parser ends an expression at a line
//! break. Two top-level lines are not token-shaped (a target contains `-`)
//! and are read whole: `module name=N, target=T` and `buffer N = {...}`.
//! A line whose first character is `#` is a comment; Halide never prints one,
//! and the test corpora use it for their `# expect:` lines.

use misaal_isa::Diagnostic;
use misaal_isa::diag::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// A name: letters, digits, `_`, `.`, `$` and `:`, not starting with a
    /// digit or `.` (`f$1.s0.x.x`, `input.min.0`, `::f_par_for`).
    Ident(String),
    /// An unsigned integer literal; the parser applies a leading `-`.
    Int(u64),
    /// A float literal and its width: `0.5f` 32, `0.5h` 16, `0.5` 64; also
    /// `inf`, `nan` with the same suffixes.
    Float(f64, u8),
    Str(String),
    /// `module name=N, target=T`.
    ModuleHeader { name: String, target: String },
    /// `buffer N = {...}`: a constant buffer, its contents elided by Halide.
    BufferDecl(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    EqEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Bang,
    Eof,
}

impl Tok {
    /// How a diagnostic names this token.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Int(n) => format!("number {n}"),
            Tok::Float(x, _) => format!("number {x}"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::ModuleHeader { .. } => "`module` header".into(),
            Tok::BufferDecl(_) => "`buffer` declaration".into(),
            Tok::Eof => "end of file".into(),
            t => format!("`{}`", t.symbol()),
        }
    }

    fn symbol(&self) -> &'static str {
        match self {
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Assign => "=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
            _ => "?",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// A line break separates this token from the one before it.
    pub starts_line: bool,
}

pub fn lex(file: &str, text: &str) -> Result<Vec<Token>, Diagnostic> {
    Lexer { file, src: text.as_bytes(), text, pos: 0, line: 1, col: 1, starts_line: true }.run()
}

struct Lexer<'a> {
    file: &'a str,
    text: &'a str,
    src: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
    starts_line: bool,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c == b'$'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'$' | b':')
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> u8 {
        self.src.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn bump(&mut self) -> u8 {
        let c = self.peek(0);
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if c & 0xc0 != 0x80 {
            // Count characters, not UTF-8 continuation bytes.
            self.col += 1;
        }
        c
    }

    fn err(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::new(self.file, span, msg)
    }

    /// The rest of the current line, consumed.
    fn rest_of_line(&mut self) -> &str {
        let start = self.pos;
        while self.pos < self.src.len() && self.peek(0) != b'\n' {
            self.bump();
        }
        &self.text[start..self.pos]
    }

    fn run(mut self) -> Result<Vec<Token>, Diagnostic> {
        let mut out = Vec::new();
        loop {
            // Skip blanks and comment lines.
            loop {
                match self.peek(0) {
                    b' ' | b'\t' | b'\r' => {
                        self.bump();
                    }
                    b'\n' => {
                        self.bump();
                        self.starts_line = true;
                    }
                    b'#' if self.col == 1 => {
                        self.rest_of_line();
                    }
                    _ => break,
                }
            }
            let span = Span { line: self.line, col: self.col };
            if self.pos >= self.src.len() {
                out.push(Token { tok: Tok::Eof, span, starts_line: true });
                return Ok(out);
            }
            let tok = self.token(span)?;
            out.push(Token { tok, span, starts_line: self.starts_line });
            self.starts_line = false;
        }
    }

    fn token(&mut self, span: Span) -> Result<Tok, Diagnostic> {
        let rest = &self.text[self.pos..];
        if span.col == 1 && rest.starts_with("module name=") {
            return self.module_header(span);
        }
        if span.col == 1 && rest.starts_with("buffer ") && rest.lines().next().is_some_and(|l| l.trim_end().ends_with("= {...}")) {
            let line = self.rest_of_line().trim_end();
            let name = line["buffer ".len()..line.len() - "= {...}".len()].trim();
            if name.is_empty() || !name.bytes().all(is_ident_char) {
                return Err(self.err(span, "expected a buffer name in `buffer NAME = {...}`"));
            }
            return Ok(Tok::BufferDecl(name.to_string()));
        }
        let c = self.peek(0);
        if is_ident_start(c) || (c == b':' && self.peek(1) == b':') {
            let start = self.pos;
            while is_ident_char(self.peek(0)) {
                self.bump();
            }
            let word = &self.text[start..self.pos];
            // Halide prints non-finite floats as words: `inff`, `nanh`, `inf`.
            let bits = match word.as_bytes().last() {
                Some(b'f') => 32,
                Some(b'h') => 16,
                _ => 64,
            };
            let stem = if bits == 64 { word } else { &word[..word.len() - 1] };
            match stem {
                "inf" => return Ok(Tok::Float(f64::INFINITY, bits)),
                "nan" => return Ok(Tok::Float(f64::NAN, bits)),
                _ => {}
            }
            return Ok(Tok::Ident(word.to_string()));
        }
        if c.is_ascii_digit() {
            return self.number(span);
        }
        if c == b'"' {
            return self.string(span);
        }
        let two = [c, self.peek(1)];
        let tok = match &two {
            b"==" => Some(Tok::EqEq),
            b"!=" => Some(Tok::Ne),
            b"<=" => Some(Tok::Le),
            b">=" => Some(Tok::Ge),
            b"&&" => Some(Tok::AndAnd),
            b"||" => Some(Tok::OrOr),
            _ => None,
        };
        if let Some(t) = tok {
            self.bump();
            self.bump();
            return Ok(t);
        }
        let tok = match c {
            b'(' => Tok::LParen,
            b')' => Tok::RParen,
            b'[' => Tok::LBracket,
            b']' => Tok::RBracket,
            b'{' => Tok::LBrace,
            b'}' => Tok::RBrace,
            b',' => Tok::Comma,
            b'=' => Tok::Assign,
            b'+' => Tok::Plus,
            b'-' => Tok::Minus,
            b'*' => Tok::Star,
            b'/' => Tok::Slash,
            b'%' => Tok::Percent,
            b'<' => Tok::Lt,
            b'>' => Tok::Gt,
            b'!' => Tok::Bang,
            _ => {
                let ch = self.text[self.pos..].chars().next().unwrap_or('?');
                return Err(self.err(span, format!("unexpected character `{ch}`")));
            }
        };
        self.bump();
        Ok(tok)
    }

    fn module_header(&mut self, span: Span) -> Result<Tok, Diagnostic> {
        let line = self.rest_of_line().trim_end();
        let body = &line["module name=".len()..];
        let Some((name, target)) = body.split_once(", target=") else {
            return Err(self.err(span, "expected `module name=NAME, target=TARGET`"));
        };
        if name.is_empty() || target.is_empty() || target.contains(char::is_whitespace) {
            return Err(self.err(span, "expected `module name=NAME, target=TARGET`"));
        }
        Ok(Tok::ModuleHeader { name: name.to_string(), target: target.to_string() })
    }

    fn number(&mut self, span: Span) -> Result<Tok, Diagnostic> {
        let start = self.pos;
        while self.peek(0).is_ascii_digit() {
            self.bump();
        }
        let is_float = self.peek(0) == b'.' && self.peek(1).is_ascii_digit();
        if is_float {
            self.bump();
            while self.peek(0).is_ascii_digit() {
                self.bump();
            }
        }
        let digits = &self.text[start..self.pos];
        let bits = match self.peek(0) {
            b'f' => 32,
            b'h' => 16,
            _ => 64,
        };
        if bits != 64 {
            self.bump();
        }
        if is_ident_char(self.peek(0)) {
            return Err(self.err(span, format!("malformed number `{}`", &self.text[start..=self.pos])));
        }
        if is_float || bits != 64 {
            let v: f64 = digits.parse().map_err(|_| self.err(span, format!("malformed number `{digits}`")))?;
            return Ok(Tok::Float(v, bits));
        }
        digits.parse::<u64>().map(Tok::Int).map_err(|_| self.err(span, format!("integer literal {digits} is too large")))
    }

    fn string(&mut self, span: Span) -> Result<Tok, Diagnostic> {
        self.bump();
        let mut bytes = Vec::new();
        loop {
            match self.peek(0) {
                0 if self.pos >= self.src.len() => return Err(self.err(span, "unterminated string")),
                b'\n' => return Err(self.err(span, "unterminated string")),
                b'"' => {
                    self.bump();
                    break;
                }
                b'\\' => {
                    let esc = Span { line: self.line, col: self.col };
                    self.bump();
                    let c = match self.bump() {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b't' => b'\t',
                        b'r' => b'\r',
                        b'n' => b'\n',
                        b'x' => {
                            let hex = [self.bump(), self.bump()];
                            std::str::from_utf8(&hex)
                                .ok()
                                .and_then(|h| u8::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.err(esc, "expected two hex digits after `\\x`"))?
                        }
                        _ => return Err(self.err(esc, "unknown escape in string")),
                    };
                    bytes.push(c);
                }
                _ => {
                    let c = self.bump();
                    bytes.push(c);
                }
            }
        }
        Ok(Tok::Str(String::from_utf8_lossy(&bytes).into_owned()))
    }
}
