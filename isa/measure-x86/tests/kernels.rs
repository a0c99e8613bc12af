//! The generated timing kernels and the timer's arithmetic. An integration
//! test, so that the generated code for every spec is compiled once (the
//! crate builds no unit-test harness).

use misaal_measure_x86::{Chain, REFERENCE, Timer, confirmed_min, fastest, kernels, lookup};

#[test]
fn fastest_run() {
    assert_eq!(fastest([3.0, 1.0, 2.0].into_iter()), 1.0);
    assert_eq!(fastest(std::iter::empty()), f64::INFINITY);
}

#[test]
fn every_spec_gets_kernels() {
    // 1,806 specs in isa/specs/x86 when this was written; none lacks
    // a Rust signature.
    assert!(kernels().len() >= 1800, "{}", kernels().len());
    assert!(lookup(REFERENCE).is_some_and(|k| k.chain == Chain::Direct));
    assert_eq!(lookup("_mm256_cvtepi8_epi16").map(|k| k.chain), Some(Chain::Cast));
    assert_eq!(lookup("_mm256_movemask_epi8").map(|k| k.chain), Some(Chain::None));
}

#[test]
fn confirmed_minimum() {
    assert_eq!(confirmed_min(&[1.0, 0.5, 0.8, 0.81], 0.02), Some(0.8));
    assert_eq!(confirmed_min(&[1.0, 0.5, 0.505], 0.02), Some(0.5));
    assert_eq!(confirmed_min(&[1.0, 0.5], 0.02), None);
    assert_eq!(confirmed_min(&[f64::NAN, 2.0, 2.0], 0.0), Some(2.0));
}

/// The kernels run and give positive, finite numbers (which mean little in
/// an unoptimized test build).
#[test]
fn reference_kernel_runs() {
    let t = Timer { repeats: 3, min_ticks: 2_000 };
    let k = lookup(REFERENCE).unwrap();
    assert!(lookup("_mm256_movemask_epi8").unwrap().latency_loops().is_none());
    let (Some(lat), Some(tp)) = (k.latency_loops(), k.throughput_loops()) else {
        misaal_testkit::skip(&format!("this CPU lacks a feature of {REFERENCE} (AVX2)"));
        return;
    };
    let (nr, n) = (t.size(&lat), t.size(&tp));
    let tpc = t.ticks_per_cycle(&lat, nr);
    let v = t.visit(&tp, n, &lat, nr);
    for x in [tpc, v.long, v.short, v.per_op(&tp, v.ticks_per_cycle)] {
        assert!(x.is_finite() && x > 0.0, "{tpc} {v:?}");
    }
}
