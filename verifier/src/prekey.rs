//! Pre-keys: a rule instance's verdict found without unrolling its sides.
//!
//! A verdict is stored under the [`proof_key`](crate::audit::proof_key) of
//! the instance's sides, and computing that means building both sides'
//! semantics (a few milliseconds an instance, most of a compile's verdict
//! time). The pre-key digests instead what those sides are built from:
//!
//! - the rule's two sides (without source positions), its numeric
//!   variables and the instance's assignment;
//! - the source text of every spec the sides name (target instructions
//!   after template expansion, Halide ops) and of every function (`def`)
//!   of both libraries, which any spec may call;
//! - [`ENGINE_DIGEST`], a digest of the code that builds sides from these
//!   (`verifier/build.rs`).
//!
//! Building the sides is deterministic in these, so two instances with the
//! same pre-key have the same proof key. When a verdict is settled through
//! the proof key, the pair is recorded (a `proof-key` row of the verdict
//! files, see [`crate::verdicts`]); a later lookup by pre-key answers only
//! through that proof key's own `proved` row. A pre-key that matches
//! nothing, or names a proof key with no `proved` row, answers nothing and
//! the caller takes the proof-key path.

use crate::audit::{InstanceResult, Libraries, Verdict, VerdictCache};
use misaal_rulesets::{Assignment, Rule, Term, describe_env, expand_name};
use std::fmt::Write;
use std::sync::Mutex;

/// See `verifier/build.rs`.
pub const ENGINE_DIGEST: &str = env!("MISAAL_SIDES_ENGINE_DIGEST");

/// A rule side as text, without source positions.
fn side_text(t: &Term, out: &mut String) {
    match t {
        Term::Var(v, _) => write!(out, "?{v:?}").expect("to a string"),
        Term::Int(e, _) => write!(out, "(int {e:?})").expect("to a string"),
        Term::Type(s, e, n, _) => write!(out, "(type {s:?} {e:?} {n:?})").expect("to a string"),
        Term::Instr(name, args, _) | Term::Op(name, args, _) => {
            let kind = if matches!(t, Term::Instr(..)) { "instr" } else { "op" };
            write!(out, "({kind} {name:?}").expect("to a string");
            for a in args {
                out.push(' ');
                side_text(a, out);
            }
            out.push(')');
        }
    }
}

/// The specs a side names, each once, in order: `(true, NAME)` for a target
/// instruction (its name expanded), `(false, NAME)` for a Halide op.
fn named_specs(t: &Term, env: &Assignment, out: &mut Vec<(bool, String)>) -> Result<(), String> {
    let (Term::Instr(name, args, _) | Term::Op(name, args, _)) = t else { return Ok(()) };
    let spec = match t {
        Term::Instr(..) => (true, expand_name(name, env)?),
        _ => (false, name.clone()),
    };
    if !out.contains(&spec) {
        out.push(spec);
    }
    args.iter().try_for_each(|a| named_specs(a, env, out))
}

/// The pre-key of `rule` at `env`: `i` and 32 hex digits; `None` when a spec
/// it names has no source text in `libs` (not there, or its semantics
/// withheld), so that only the proof-key path can answer.
pub fn pre_key(libs: &Libraries, rule: &Rule, env: &Assignment) -> Option<String> {
    let mut text = format!("pre-key 1\nengine {ENGINE_DIGEST}\ntarget {}\nnumeric {:?}\nenv {env:?}\nlhs ", rule.target.name, rule.numeric_vars());
    side_text(&rule.lhs, &mut text);
    text.push_str("\nrhs ");
    side_text(&rule.rhs, &mut text);
    let mut specs = Vec::new();
    named_specs(&rule.lhs, env, &mut specs).ok()?;
    named_specs(&rule.rhs, env, &mut specs).ok()?;
    for (instr, name) in &specs {
        let (kind, lib) = if *instr { ("instr", libs.target) } else { ("op", libs.halide) };
        let source = lib.spec_source(name)?;
        write!(text, "\n{kind} {name:?} {}\n{source}", source.len()).expect("to a string");
    }
    write!(text, "\ndefs {} {}", libs.target.defs_digest(), libs.halide.defs_digest()).expect("to a string");
    Some(format!("i{}", misaal_isa::status::text_digest(&text)))
}

/// The verdict of `rule` at `env` if its pre-key names a proof key with a
/// `proved` row in `cache`; `None` otherwise (then run the job).
pub fn proved_by_pre_key(libs: &Libraries, rule: &Rule, env: &Assignment, cache: &Mutex<VerdictCache>) -> Option<InstanceResult> {
    let pre = pre_key(libs, rule, env)?;
    let mut c = cache.lock().expect("cache");
    let proof = c.proof_key_of(&pre)?;
    let (verdict, solver_ms, quickcheck_cases, counterexample) = c.get(&proof).filter(|r| r.0 == Verdict::Proved)?;
    Some(InstanceResult { rule: rule.name.clone(), instantiation: describe_env(env), verdict, solver_ms, quickcheck_cases, counterexample, cached: true })
}
