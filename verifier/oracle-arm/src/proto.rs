//! Intrinsic prototypes, read from the cross compiler's own `arm_neon.h`, so
//! the harness passes every operand with the exact C type the intrinsic
//! takes and no table of ours can drift from the header.

use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proto {
    pub ret: String,
    /// (C type, whether it is `const int`: an immediate the compiler must see as a constant).
    pub params: Vec<(String, bool)>,
}

/// Every `extern __inline` intrinsic of the header, by name.
pub fn parse_header(text: &str) -> HashMap<String, Proto> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = HashMap::new();
    for (k, line) in lines.iter().enumerate() {
        // GCC writes `__extension__ extern __inline RET`, then attributes, then `name (params)`.
        let Some(ret) = line.strip_prefix("__extension__ extern __inline ") else { continue };
        // A long parameter list continues on the next lines, up to its `)`.
        let mut decl = String::new();
        for l in lines.iter().skip(k + 2).take(8) {
            decl.push_str(l.trim());
            decl.push(' ');
            if l.trim_end().ends_with(')') {
                break;
            }
        }
        let decl = decl.trim_end();
        let Some((name, rest)) = decl.split_once('(') else { continue };
        let name = name.trim();
        if !name.starts_with('v') || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            continue;
        }
        let Some(args) = rest.strip_suffix(')') else { continue };
        let params = args
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty() && *a != "void")
            .map(|a| {
                // Drop the parameter name (`__a`), keep the type.
                let ty = a.rsplit_once(' ').map(|(t, _)| t.trim()).unwrap_or(a);
                // `const int` and `int const` alike: an immediate.
                let words: Vec<&str> = ty.split_whitespace().filter(|w| *w != "const" && *w != "__const").collect();
                let is_const = words.len() < ty.split_whitespace().count();
                (words.join(" "), is_const)
            })
            .collect();
        out.insert(name.to_string(), Proto { ret: ret.trim().to_string(), params });
    }
    interleave_pairs(&lines, &mut out);
    out
}

/// GCC defines `vzip_s8` and `vuzp_s8` (both halves as a pair) by a macro:
/// `__DEFINTERLEAVE (op, rettype, intype, suffix, Q)` rows in the
/// `__INTERLEAVE_LIST` macro, which is expanded once per `op`.
fn interleave_pairs(lines: &[&str], out: &mut HashMap<String, Proto>) {
    let rows: Vec<[String; 4]> = lines
        .iter()
        .filter_map(|l| l.trim().strip_prefix("__DEFINTERLEAVE (op,"))
        .filter_map(|r| {
            let f: Vec<String> = r.trim_end_matches(['\\', ' ', '\t']).trim_end_matches(')').split(',').map(|x| x.trim().to_string()).collect();
            (f.len() == 4).then(|| [f[0].clone(), f[1].clone(), f[2].clone(), f[3].clone()])
        })
        .collect();
    for op in lines.iter().filter_map(|l| l.strip_prefix("__INTERLEAVE_LIST (").and_then(|r| r.strip_suffix(')'))) {
        for [ret, inty, sfx, q] in &rows {
            out.insert(format!("v{op}{q}_{sfx}"), Proto { ret: ret.clone(), params: vec![(inty.clone(), false), (inty.clone(), false)] });
        }
    }
}

/// Size in bits of a NEON C type (`int8x8_t`, `uint16x8x2_t`, `int32_t`,
/// `poly8_t`, `int`), or `None` for a type the harness does not pass.
pub fn type_bits(ty: &str) -> Option<u32> {
    let t = ty.strip_suffix("_t").unwrap_or(ty);
    if t == "int" {
        return Some(32);
    }
    let base = ["uint", "int", "poly"].iter().find_map(|p| t.strip_prefix(p))?;
    let mut parts = base.split('x');
    let elem: u32 = parts.next()?.parse().ok()?;
    let lanes: u32 = parts.next().map(|n| n.parse().ok()).unwrap_or(Some(1))?;
    let regs: u32 = parts.next().map(|n| n.parse().ok()).unwrap_or(Some(1))?;
    (parts.next().is_none() && [8, 16, 32, 64, 128].contains(&elem)).then_some(elem * lanes * regs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_gcc_prototypes() {
        let h = "\n__extension__ extern __inline int8x8_t\n__attribute__ ((__always_inline__, __gnu_inline__, __artificial__))\nvshr_n_s8 (int8x8_t __a, const int __b)\n{\n";
        let p = parse_header(h);
        assert_eq!(p["vshr_n_s8"], Proto { ret: "int8x8_t".into(), params: vec![("int8x8_t".into(), false), ("int".into(), true)] });
        let h = "__extension__ extern __inline int16x4_t\n__attribute__ ((__always_inline__))\nvmla_lane_s16(int16x4_t __a, int16x4_t __b,\n\t       int16x4_t __c, int const __lane)\n{\n";
        assert_eq!(parse_header(h)["vmla_lane_s16"].params[3], ("int".to_string(), true));
    }

    #[test]
    fn reads_macro_defined_pairs() {
        let h = "#define __INTERLEAVE_LIST(op)\t\\\n  __DEFINTERLEAVE (op, int8x8x2_t, int8x8_t, s8,)\t\\\n  __DEFINTERLEAVE (op, int8x16x2_t, int8x16_t, s8, q)\n__INTERLEAVE_LIST (zip)\n";
        let p = parse_header(h);
        assert_eq!(p["vzip_s8"], Proto { ret: "int8x8x2_t".into(), params: vec![("int8x8_t".into(), false), ("int8x8_t".into(), false)] });
        assert_eq!(p["vzipq_s8"].ret, "int8x16x2_t");
    }

    #[test]
    fn sizes() {
        assert_eq!(type_bits("int8x8_t"), Some(64));
        assert_eq!(type_bits("uint16x8x2_t"), Some(256));
        assert_eq!(type_bits("int64_t"), Some(64));
        assert_eq!(type_bits("poly8x16_t"), Some(128));
        assert_eq!(type_bits("float32x4_t"), None);
    }
}
