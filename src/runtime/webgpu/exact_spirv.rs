//! Exact float arithmetic on Vulkan: WGSL compiled to SPIR-V here (naga, as wgpu would), every
//! float operation decorated `NoContraction`, and the module handed to the driver as is.
//!
//! Vulkan compilers may rewrite float arithmetic as if it were real arithmetic: Mesa folds
//! `x - x` to 0 (wrong for inf and NaN), `x * 0` to 0 and NaN comparisons to constants. SPIR-V's
//! `NoContraction` marks an operation exact: Mesa's SPIR-V front end then keeps it out of every
//! inexact algebraic rule, so the kernel computes what the interpreter computes. Float `!=` is
//! made unordered (true with a NaN), as the interpreter's is.

use naga::back::spv;
use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
use spirv::{Decoration, Op};

/// SPIR-V for the compute entry point `entry` of `wgsl`, with the pipeline-overridable
/// constants set to `constants`, float arithmetic marked exact. The module keeps wgpu's
/// memory safety: bounds-checked (restricted) indexing and loads, guarded integer division. An
/// error names the stage that refused it.
pub(super) fn exact_spirv(wgsl: &str, entry: &str, constants: &[(&str, f64)]) -> Result<Vec<u32>, String> {
    let module = naga::front::wgsl::parse_str(wgsl).map_err(|e| format!("WGSL: {}", e.emit_to_string(wgsl)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| format!("WGSL validation: {}", e.emit_to_string(wgsl)))?;
    let mut values = naga::back::PipelineConstants::default();
    for (name, v) in constants {
        values.insert(name.to_string(), *v);
    }
    let stage = naga::ShaderStage::Compute;
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, Some((stage, entry)), &values)
            .map_err(|e| format!("pipeline constants: {e}"))?;
    let restrict = BoundsCheckPolicy::Restrict;
    let options = spv::Options {
        lang_version: (1, 0),
        bounds_check_policies: BoundsCheckPolicies {
            index: restrict,
            buffer: restrict,
            image_load: restrict,
            binding_array: BoundsCheckPolicy::Unchecked,
        },
        zero_initialize_workgroup_memory: spv::ZeroInitializeWorkgroupMemoryMode::None,
        // Every loop of a kernel runs a range whose bound its body does not change, so none
        // needs naga's iteration cap (with it and restricted loads, lavapipe computes a wrong
        // sum in a matmul reduced again: fuzz seed 0x2dc832, NOOPT).
        force_loop_bounding: false,
        emit_int_div_checks: true,
        ..spv::Options::default()
    };
    let pipeline = spv::PipelineOptions { shader_stage: stage, entry_point: entry.to_string() };
    let mut words = spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| format!("SPIR-V: {e}"))?;
    make_float_ops_exact(&mut words)?;
    Ok(words)
}

/// Whether `op` computes on floats in a way a compiler may rewrite: arithmetic, comparisons and
/// NaN/inf tests (Mesa honours `NoContraction` on each).
fn is_float_op(op: Op) -> bool {
    use Op::*;
    matches!(
        op,
        FNegate
            | FAdd
            | FSub
            | FMul
            | FDiv
            | FRem
            | FMod
            | VectorTimesScalar
            | Dot
            | ExtInst
            | IsNan
            | IsInf
            | FOrdEqual
            | FUnordEqual
            | FOrdNotEqual
            | FUnordNotEqual
            | FOrdLessThan
            | FUnordLessThan
            | FOrdGreaterThan
            | FUnordGreaterThan
            | FOrdLessThanEqual
            | FUnordLessThanEqual
            | FOrdGreaterThanEqual
            | FUnordGreaterThanEqual
    )
}

fn is_annotation(op: Op) -> bool {
    use Op::*;
    matches!(op, Decorate | MemberDecorate | DecorationGroup | GroupDecorate | GroupMemberDecorate | DecorateId)
}

/// Adds `OpDecorate %id NoContraction` for the result of every float operation, after the
/// module's other annotations, where SPIR-V's layout wants them (an `OpExtInst` may be an
/// integer one: marking it exact changes nothing). And makes float `!=` IEEE's: naga writes WGSL's
/// `!=` as `OpFOrdNotEqual`, false when an operand is NaN; the interpreter's (and C's) `!=` is true
/// there, `OpFUnordNotEqual`, laid out the same.
pub(super) fn make_float_ops_exact(words: &mut Vec<u32>) -> Result<(), String> {
    const HEADER: usize = 5;
    if words.len() < HEADER || words[0] != spirv::MAGIC_NUMBER {
        return Err("SPIR-V: not a module".into());
    }
    let mut exact: Vec<u32> = Vec::new();
    let (mut annotations_end, mut first_type) = (None, None);
    let types = Op::TypeVoid as u32..=Op::TypeForwardPointer as u32;
    let mut at = HEADER;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return Err(format!("SPIR-V: malformed instruction at word {at}"));
        }
        if words[at] & 0xffff == Op::FOrdNotEqual as u32 {
            words[at] = (words[at] & !0xffff) | Op::FUnordNotEqual as u32;
        }
        let inst = &words[at..at + count];
        match Op::from_u32(inst[0] & 0xffff) {
            Some(op) if is_annotation(op) => annotations_end = Some(at + count),
            // Every float operation is laid out [opcode, result type, result id, operands...].
            Some(op) if is_float_op(op) && count >= 3 => exact.push(inst[2]),
            _ if first_type.is_none() && types.contains(&(inst[0] & 0xffff)) => first_type = Some(at),
            _ => {}
        }
        at += count;
    }
    let insert_at = annotations_end.or(first_type).ok_or("SPIR-V: a module without types")?;
    let decorations: Vec<u32> =
        exact.iter().flat_map(|&id| [(3 << 16) | Op::Decorate as u32, id, Decoration::NoContraction as u32]).collect();
    words.splice(insert_at..insert_at, decorations);
    Ok(())
}
