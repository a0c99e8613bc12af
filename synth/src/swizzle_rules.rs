//! Candidate lowering rules from swizzle classes: for each swizzle that an
//! instruction performs, the Halide shuffle term (interleave, concat, slice,
//! broadcast) that means the same permutation, rewritten to that
//! instruction. Written in the ruleset language; nothing here is trusted
//! until the verifier proves it.

use misaal_datalog::Swizzle;
use misaal_datalog::swizzles::Src;

/// One candidate: a rule's text and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub text: String,
    pub class: String,
    pub instruction: String,
}

/// `(slice (u E n) m begin 1 ?x)`: n lanes of x's m, from `begin`.
fn slice(e: u32, n: u32, m: u32, begin: u32, x: &str) -> String {
    if n == m && begin == 0 {
        return x.to_string();
    }
    format!("(slice (u {e} {n}) {m} {begin} 1 {x})")
}

/// The Halide term for an interleave of two inputs of `m` lanes, `n` output
/// lanes starting at input lane `off`.
fn interleave(e: u32, n: u32, m: u32, off: u32) -> String {
    format!("(interleave (u {e} {}) {} {})", n / 2, slice(e, n / 2, m, off, "?a"), slice(e, n / 2, m, off, "?b"))
}

/// The Halide term for a pattern of a known class, if there is one.
fn halide_term(s: &Swizzle, m: u32) -> Option<String> {
    let e = s.elem_bits;
    let n = s.pattern.len() as u32;
    let at = |l: usize| match s.pattern[l] {
        Src::Elem(o, x) => Some((o, x)),
        Src::Zero => None,
    };
    match s.class.as_str() {
        "interleave/2" => Some(interleave(e, n, m, at(0)?.1)),
        "in-lane interleave/2" => {
            let per = 128 / e;
            let groups: Vec<String> = (0..n / per).map(|g| at((g * per) as usize).map(|(_, x)| interleave(e, per, m, x))).collect::<Option<_>>()?;
            // concat<S, E, N, M>: N lanes then M lanes; fold from the left.
            let mut acc = groups[0].clone();
            for (k, gterm) in groups.iter().enumerate().skip(1) {
                acc = format!("(concat (u {e} {}) {per} {acc} {gterm})", per * k as u32);
            }
            Some(acc)
        }
        "broadcast/1" => {
            let (_, x) = at(0)?;
            Some(format!("(broadcast (u {e} {n}) {})", slice(e, 1, m, x, "?a")))
        }
        c if c.starts_with("block-") => {
            // Contiguous runs, each a slice of one input; concatenated.
            let names = ["?a", "?b"];
            let mut runs: Vec<(u8, u32, u32)> = Vec::new();
            for l in 0..n as usize {
                let (o, x) = at(l)?;
                match runs.last_mut() {
                    Some((ro, rx, len)) if *ro == o && *rx + *len == x => *len += 1,
                    _ => runs.push((o, x, 1)),
                }
            }
            let mut acc: Option<(String, u32)> = None;
            for (o, x, len) in runs {
                let t = slice(e, len, m, x, names.get(o as usize)?);
                acc = Some(match acc {
                    None => (t, len),
                    Some((a, alen)) => (format!("(concat (u {e} {alen}) {len} {a} {t})"), alen + len),
                });
            }
            acc.map(|(t, _)| t)
        }
        _ => None,
    }
}

/// Candidates for every swizzle an instruction performs, each a rule of
/// `target`'s dialect (its head and ruleset are the target's name). `operand_lanes`
/// gives each instruction's vector operand lane count at the swizzle's
/// element width (its operands' width over the element width).
pub fn candidates(swizzles: &[Swizzle], target: &str, operand_bits: impl Fn(&str) -> Option<u32>) -> Vec<Candidate> {
    let mut out = Vec::new();
    for s in swizzles {
        for instr in &s.performers {
            let Some(bits) = operand_bits(instr) else { continue };
            let Some(lhs) = halide_term(s, bits / s.elem_bits) else { continue };
            let args = if s.inputs == 2 { "?a ?b" } else { "?a" };
            let name = format!("synth.swizzle.{}", instr.trim_start_matches('_'));
            out.push(Candidate {
                text: format!("(rewrite {lhs} ({target} {instr} {args}) :name \"{name}\" :ruleset {target})"),
                name,
                class: s.class.clone(),
                instruction: instr.clone(),
            });
        }
    }
    out
}
