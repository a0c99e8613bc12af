//! Class membership is checked, never assumed: the class instantiated with a
//! member's parameters must equal the member's own semantics.

use crate::differential::CaseGen;
use crate::smt::{Equivalence, prove_equivalent};
use misaal_datalog::{Class, Member, instantiate};
use misaal_isa::Semantics;
use quickcheck::Gen;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MembershipCheck {
    /// Z3 proved the instantiation equal to the member.
    Z3,
    /// Z3 gave no answer in time; the evaluator agreed on this many random cases.
    Quickcheck(usize),
    Failed(String),
}

impl MembershipCheck {
    pub fn label(&self) -> String {
        match self {
            MembershipCheck::Z3 => "z3".into(),
            MembershipCheck::Quickcheck(n) => format!("quickcheck:{n}"),
            MembershipCheck::Failed(_) => "failed".into(),
        }
    }
}

pub fn check_membership(class: &Class, member: &Member, own: &Semantics, timeout_ms: u32) -> MembershipCheck {
    let inst = match instantiate(class, member) {
        Ok(s) => s,
        Err(e) => return MembershipCheck::Failed(format!("instantiation failed: {}", e.0)),
    };
    match prove_equivalent(&inst, own, timeout_ms) {
        Equivalence::Proved => MembershipCheck::Z3,
        Equivalence::Differ(ops) => {
            let hex: Vec<String> = ops.iter().map(|o| o.to_hex()).collect();
            MembershipCheck::Failed(format!("differs from {} on operands {}", member.instr.name, hex.join(" ")))
        }
        Equivalence::Unknown(_) => {
            let cases = 10_000;
            let mut g = Gen::from_size_and_seed(64, 0x636c_6173);
            let case_gen = CaseGen::new(&member.instr);
            for _ in 0..cases {
                let c = case_gen.case(&mut g);
                if inst.eval(&c).ok() != own.eval(&c).ok() {
                    let hex: Vec<String> = c.iter().map(|o| o.to_hex()).collect();
                    return MembershipCheck::Failed(format!("differs from {} on operands {}", member.instr.name, hex.join(" ")));
                }
            }
            MembershipCheck::Quickcheck(cases)
        }
    }
}
