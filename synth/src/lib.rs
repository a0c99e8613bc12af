//! Offline rule synthesis, to come: class-level enumeration inside relevance
//! sets, fingerprinting at reduced lane counts, Z3 concretization, and
//! parameter abstraction into rulesets.
//!
//! Empty today, so it has no dependencies; the hand-written rules live in
//! `rulesets/x86.egg`. When it is built it will own enumeration and search,
//! delegate proofs to `misaal-verifier`, and know nothing of code generation.
