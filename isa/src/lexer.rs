//! Tokens of the semantics language.
//!
//! Newlines are tokens: like vendor pseudocode, a statement ends at the end of
//! its line. `//` starts a comment.

use crate::diag::{Diagnostic, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Num(i128),
    /// Only meaningful on a `cost` line (`throughput 0.33`).
    Decimal(f64),
    Str(String),
    Newline,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    /// `.` of `x.lo` / `x.hi` (a decimal point inside a number is part of it).
    Dot,
    Colon,
    Assign,
    Arrow,
    Question,
    Plus,
    Minus,
    Star,
    /// `/u` and `%u`: unsigned division and remainder.
    UDiv,
    URem,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Shl,
    /// `>>u` logical, `>>s` arithmetic.
    Shr { signed: bool },
    Eq,
    Ne,
    /// `<`, `<=`, `>`, `>=` with an optional `s`/`u` suffix.
    Cmp { op: CmpTok, signed: Option<bool> },
    Eof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpTok {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Tok {
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Num(n) => format!("number {n}"),
            Tok::Decimal(n) => format!("number {n}"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::Newline => "end of line".into(),
            Tok::Eof => "end of file".into(),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::LBracket => "`[`".into(),
            Tok::RBracket => "`]`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Dot => "`.`".into(),
            Tok::Colon => "`:`".into(),
            Tok::Assign => "`:=`".into(),
            Tok::Arrow => "`->`".into(),
            Tok::Question => "`?`".into(),
            Tok::Plus => "`+`".into(),
            Tok::Minus => "`-`".into(),
            Tok::Star => "`*`".into(),
            Tok::UDiv => "`/u`".into(),
            Tok::URem => "`%u`".into(),
            Tok::Amp => "`&`".into(),
            Tok::Pipe => "`|`".into(),
            Tok::Caret => "`^`".into(),
            Tok::Tilde => "`~`".into(),
            Tok::Shl => "`<<`".into(),
            Tok::Shr { signed } => format!("`>>{}`", if *signed { "s" } else { "u" }),
            Tok::Eq => "`==`".into(),
            Tok::Ne => "`!=`".into(),
            Tok::Cmp { op, signed } => {
                let o = match op {
                    CmpTok::Lt => "<",
                    CmpTok::Le => "<=",
                    CmpTok::Gt => ">",
                    CmpTok::Ge => ">=",
                };
                let s = match signed {
                    Some(true) => "s",
                    Some(false) => "u",
                    None => "",
                };
                format!("`{o}{s}`")
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

pub fn lex(file: &str, src: &str) -> Result<Vec<Token>, Diagnostic> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    let is_ident_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let span = Span { line, col };
        let peek = |k: usize| chars.get(i + k).copied().unwrap_or('\0');
        // A suffix letter only counts when it is not the start of an identifier.
        let suffix = |k: usize| {
            let s = peek(k);
            ((s == 's' || s == 'u') && !is_ident_char(peek(k + 1))).then_some(s == 's')
        };
        let (tok, len) = match c {
            '\n' => {
                out.push(Token { tok: Tok::Newline, span });
                i += 1;
                line += 1;
                col = 1;
                continue;
            }
            ' ' | '\t' | '\r' => {
                i += 1;
                col += 1;
                continue;
            }
            '/' | '%' if suffix(1) == Some(false) => (if c == '/' { Tok::UDiv } else { Tok::URem }, 2),
            '/' | '%' if peek(1) != '/' => {
                return Err(Diagnostic::new(file, span, format!("`{c}` needs a signedness: write `{c}u` (only unsigned division exists)")));
            }
            '/' if peek(1) == '/' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '"' => {
                let mut j = i + 1;
                let mut s = String::new();
                while j < chars.len() && chars[j] != '"' && chars[j] != '\n' {
                    s.push(chars[j]);
                    j += 1;
                }
                if j >= chars.len() || chars[j] != '"' {
                    return Err(Diagnostic::new(file, span, "unterminated string; expected a closing `\"` on the same line"));
                }
                (Tok::Str(s), j + 1 - i)
            }
            c if c.is_ascii_digit() => {
                let mut j = i;
                while j < chars.len() && (is_ident_char(chars[j]) || (chars[j] == '.' && chars.get(j + 1).is_some_and(|d| d.is_ascii_digit()))) {
                    j += 1;
                }
                let text: String = chars[i..j].iter().filter(|&&c| c != '_').collect();
                let tok = if text.contains('.') {
                    text.parse::<f64>().map(Tok::Decimal).map_err(|_| ())
                } else if let Some(h) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                    i128::from_str_radix(h, 16).map(Tok::Num).map_err(|_| ())
                } else if let Some(b) = text.strip_prefix("0b") {
                    i128::from_str_radix(b, 2).map(Tok::Num).map_err(|_| ())
                } else {
                    text.parse::<i128>().map(Tok::Num).map_err(|_| ())
                };
                let tok = tok.map_err(|_| Diagnostic::new(file, span, format!("malformed number `{}`", chars[i..j].iter().collect::<String>())))?;
                (tok, j - i)
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut j = i;
                while j < chars.len() && is_ident_char(chars[j]) {
                    j += 1;
                }
                (Tok::Ident(chars[i..j].iter().collect()), j - i)
            }
            '(' => (Tok::LParen, 1),
            ')' => (Tok::RParen, 1),
            '[' => (Tok::LBracket, 1),
            ']' => (Tok::RBracket, 1),
            ',' => (Tok::Comma, 1),
            '.' => (Tok::Dot, 1),
            '?' => (Tok::Question, 1),
            '+' => (Tok::Plus, 1),
            '*' => (Tok::Star, 1),
            '&' => (Tok::Amp, 1),
            '|' => (Tok::Pipe, 1),
            '^' => (Tok::Caret, 1),
            '~' => (Tok::Tilde, 1),
            ':' if peek(1) == '=' => (Tok::Assign, 2),
            ':' => (Tok::Colon, 1),
            '-' if peek(1) == '>' => (Tok::Arrow, 2),
            '-' => (Tok::Minus, 1),
            '=' if peek(1) == '=' => (Tok::Eq, 2),
            '!' if peek(1) == '=' => (Tok::Ne, 2),
            '<' if peek(1) == '<' => (Tok::Shl, 2),
            '>' if peek(1) == '>' => match suffix(2) {
                Some(signed) => (Tok::Shr { signed }, 3),
                None => {
                    return Err(Diagnostic::new(
                        file,
                        span,
                        "`>>` needs a signedness: write `>>u` (logical) or `>>s` (arithmetic)",
                    ));
                }
            },
            '<' | '>' => {
                let eq = peek(1) == '=';
                let op = match (c, eq) {
                    ('<', false) => CmpTok::Lt,
                    ('<', true) => CmpTok::Le,
                    ('>', false) => CmpTok::Gt,
                    _ => CmpTok::Ge,
                };
                let base = 1 + eq as usize;
                match suffix(base) {
                    Some(signed) => (Tok::Cmp { op, signed: Some(signed) }, base + 1),
                    None => (Tok::Cmp { op, signed: None }, base),
                }
            }
            other => {
                return Err(Diagnostic::new(file, span, format!("unexpected character `{other}`")));
            }
        };
        out.push(Token { tok, span });
        i += len;
        col += len as u32;
    }
    out.push(Token { tok: Tok::Eof, span: Span { line, col } });
    Ok(out)
}
