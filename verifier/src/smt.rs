//! Z3: the version this build links against. Equivalence and concretization
//! queries come with the verifier issue.

/// The linked libz3's version as `(major, minor, build, revision)`, parsed
/// from `Z3_get_full_version`.
pub fn z3_version() -> (u32, u32, u32, u32) {
    let full = z3::full_version();
    let nums: Vec<u32> = full
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    let g = |i: usize| nums.get(i).copied().unwrap_or(0);
    (g(0), g(1), g(2), g(3))
}

/// The libz3 that `scripts/setup.sh` installs.
pub const EXPECTED_Z3: (u32, u32, u32) = (5, 4, 0);

#[cfg(test)]
mod tests {
    #[test]
    fn linked_z3_is_the_one_setup_installs() {
        let (ma, mi, b, _) = super::z3_version();
        assert_eq!((ma, mi, b), super::EXPECTED_Z3, "linked Z3 is {}; run scripts/setup.sh", z3::full_version());
    }

    #[test]
    fn linked_z3_solves_a_bitvector_query() {
        // Catches a mismatch between the bindings' enum numbering and the library.
        use z3::ast::BV;
        let s = z3::Solver::new();
        let x = BV::new_const("x", 8);
        s.assert(&(x.bvadd(&BV::from_u64(1, 8))).eq(&BV::from_u64(0, 8)));
        assert_eq!(s.check(), z3::SatResult::Sat);
        let m = s.get_model().expect("model");
        assert_eq!(m.eval(&x, true).and_then(|v| v.as_u64()), Some(255));
    }
}
