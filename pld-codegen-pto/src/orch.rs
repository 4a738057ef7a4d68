//! The orchestration description (placeholder replaced below).
use crate::CodegenOptions;
use pld_ir::{Diagnostic, Program};
/// Describes the program's orchestration as JSON.
pub fn describe(_p: &Program, _o: &CodegenOptions) -> Result<String, Diagnostic> {
    Ok("{}".into())
}
