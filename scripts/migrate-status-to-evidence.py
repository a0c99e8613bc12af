# One-off (issue 27): the single STATUS.tsv tables of 702fd8e, and the Zen 4 run's, as per-machine
# evidence files. Run from the repository root at 702fd8e + this script; kept for provenance.
import re, sys, glob, os
HEADER = "# intrinsic\tstatus\tcases\tseed\tdigest\tcpu\tfamily\tmodel\tstepping\tfeatures\tdate\tversion\ttwin"
def features(target):
    out = {}
    for f in glob.glob(f"isa/specs/{target}/*.sema"):
        for l in open(f):
            m = re.match(r"instr\s+(\w+)\s*[(<].*\[(\w+)\s+(\S+)\s+\S+\]", l)
            if m: out[m.group(1)] = m.group(3).replace("+", ",")
    return out
def rows(path):
    for l in open(path):
        if l.startswith("#") or not l.strip(): continue
        yield l.rstrip("\n").split("\t")
def write(path, notes, lines):
    lines.sort()
    with open(path, "w") as o:
        o.write(HEADER + "\n")
        for n in notes: o.write("# " + n + "\n")
        for l in lines: o.write("\t".join(l) + "\n")
def legacy(target, out, cpu, fms, notes):
    feats = features(target)
    lines = []
    for n, st, cases, dig, ev in rows(f"isa/specs/{target}/STATUS.tsv"):
        if st == "skipped": continue
        assert st in ("silicon", "emulator"), st
        assert ev == cpu, (ev, cpu)
        lines.append([n, st, cases, "unknown", dig, cpu, *fms, feats[n], "unknown", "unknown", "-"])
    write(out, notes, lines)
    print(out, len(lines))
os.makedirs("isa/specs/x86/evidence", exist_ok=True)
os.makedirs("isa/specs/arm/evidence", exist_ok=True)
os.makedirs("isa/specs/hvx/evidence", exist_ok=True)
legacy("x86", "isa/specs/x86/evidence/amd-epyc-unknown.tsv", "AMD EPYC", ["unknown"]*3,
       ["The AVX2-only AMD EPYC (a Zen 3 VM, per benchmarks/SLOW_KERNELS.md) of the sessions before 2026-11-27:",
        "its rows of isa/specs/x86/STATUS.tsv as of 702fd8e (last written 2026-11-24, 6a50a9f). That table kept no",
        "family/model/stepping, seed, date or misaal version, so they read `unknown`; its 1,528 `skipped` rows are not evidence."])
arm_q = "qemu-aarch64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -cpu max"
legacy("arm", "isa/specs/arm/evidence/qemu-aarch64-7.2.22-max.tsv", arm_q, ["-"]*3,
       ["isa/specs/arm/STATUS.tsv as of 702fd8e (last written 2026-11-24, 43012f1), whose rows kept no seed, date or misaal version."])
hvx_q = "qemu-hexagon version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3) -cpu v67 (HVX 128B)"
legacy("hvx", "isa/specs/hvx/evidence/qemu-hexagon-7.2.22-v67.tsv", hvx_q, ["-"]*3,
       ["isa/specs/hvx/STATUS.tsv as of 702fd8e (last written 2026-11-24, da98018), whose rows kept no seed, date or misaal version."])
# The Zen 4 run (../shared/evidence/x86-znver4/, README there).
z = list(rows("/work/shared/evidence/x86-znver4/STATUS.tsv"))
dig = {r[0]: r[3] for r in z}
feats = features("x86")
lines = []
for n, st, cases, d, ev in z:
    twin = "-"
    if st == "proven-twin":
        m = re.fullmatch(r"= (\w+) \(Z3\)", ev); twin = m.group(1) + "@" + dig[m.group(1)]
    else:
        assert ev == "AMD EPYC" and st == "silicon", (n, st, ev)
    lines.append([n, st, cases, "120299674755436", d, "AMD EPYC", "25", "17", "1", feats[n], "2026-11-27", "0.1.0 (702fd8e)", twin])
write("isa/specs/x86/evidence/amd-epyc-f25-m17-s1.tsv",
      ["A Zen 4 (AMD EPYC, Genoa, 2 vCPUs): `misaal isa check --target x86 --cases 10000` at 702fd8e, imported from",
       "../shared/evidence/x86-znver4/STATUS.tsv; provenance in amd-epyc-f25-m17-s1/README.md, its flags in cpu-flags.txt."], lines)
print("zen4", len(lines))
