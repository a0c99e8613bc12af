//! Prototypes of the `Q6_*` intrinsics, from the comment block clang's
//! `hvx_hexagon_protos.h` puts above each macro:
//!
//! ```text
//! #if __HVX_ARCH__ >= 60
//! /* ...
//!    C Intrinsic Prototype: HVX_Vector Q6_Vb_vadd_VbVb(HVX_Vector Vu, HVX_Vector Vv)
//! ```

use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Proto {
    pub ret: String,
    /// (C type, parameter name) in order; an immediate's name starts with
    /// `I` (`Iu3`), as the header spells them.
    pub params: Vec<(String, String)>,
    /// The HVX version that introduced it (`__HVX_ARCH__ >= N`).
    pub arch: u32,
}

/// Every prototype in the header, by intrinsic name.
pub fn parse_header(text: &str) -> HashMap<String, Proto> {
    let mut out = HashMap::new();
    let mut arch = 0u32;
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("#if __HVX_ARCH__ >= ") {
            arch = v.trim().parse().unwrap_or(0);
            continue;
        }
        let Some(p) = line.strip_prefix("C Intrinsic Prototype:") else { continue };
        let p = p.trim();
        let (Some(open), Some(close)) = (p.find('('), p.rfind(')')) else { continue };
        let head = &p[..open];
        let Some(split) = head.rfind(' ') else { continue };
        let (ret, name) = (head[..split].trim().to_string(), head[split + 1..].trim().to_string());
        let args = p[open + 1..close].trim();
        let params = if args.is_empty() || args == "void" {
            Vec::new()
        } else {
            args.split(',')
                .filter_map(|a| {
                    let a = a.trim();
                    let k = a.rfind([' ', '*'])?;
                    Some((a[..=k].trim().to_string(), a[k + 1..].trim().to_string()))
                })
                .collect()
        };
        out.insert(name, Proto { ret, params, arch });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_comment_prototypes() {
        let h = "#if __HVX_ARCH__ >= 62\n/* ===\n   C Intrinsic Prototype: HVX_VectorPair Q6_Wh_vlut16_VbVhI(HVX_Vector Vu, HVX_Vector Vv, Word32 Iu3)\n   Instruction Type: CVI_VP_VS\n*/\n\
                 #if __HVX_ARCH__ >= 60\n   C Intrinsic Prototype: HVX_Vector Q6_V_vzero()\n\
                 #if __HVX_ARCH__ >= 62\n   C Intrinsic Prototype: HVX_Vector Q6_Vw_vadd_VwVwQ_carry(HVX_Vector Vu, HVX_Vector Vv, HVX_VectorPred* Qx)\n";
        let p = parse_header(h);
        let l = &p["Q6_Wh_vlut16_VbVhI"];
        assert_eq!(l.ret, "HVX_VectorPair");
        assert_eq!(l.arch, 62);
        assert_eq!(l.params[2], ("Word32".to_string(), "Iu3".to_string()));
        assert!(p["Q6_V_vzero"].params.is_empty());
        assert_eq!(p["Q6_Vw_vadd_VwVwQ_carry"].params[2].0, "HVX_VectorPred*");
    }
}
