//! Input bounds checked before the parser runs: source size and nesting depth.
//!
//! Guarantees: a source longer than [`MAX_SOURCE_BYTES`] is one diagnostic; so is a source
//! whose expressions or blocks could nest deeper than [`MAX_NESTING`] — measured on the token
//! stream (rustpython's lexer keeps no recursion), before rustpython's tree building and the
//! tree's drop, which recurse per level and cannot be bounded otherwise, could overflow the
//! stack. Below this bound the frontend's own walks refuse expressions deeper than 200 levels
//! and blocks deeper than 64 with their precise positions, so nothing deeper reaches the
//! pipeline, codegen or the simulator. The estimate is conservative: each open bracket counts
//! twice (the trailer or display and its contents), each operator, dot or keyword operator
//! once, until a `,`, `:`, `;`, `=` or the end of the logical line starts a sibling; each
//! indentation level counts twice. The diagnostic points at the token that went over.

use pld_ir::{Diagnostic, Diagnostics, FileId, Span};
use rustpython_parser::{lexer, Mode, Tok};

/// Largest source file read (8 MiB: DSL programs are kilobytes).
pub const MAX_SOURCE_BYTES: usize = 8 << 20;

/// Deepest estimated nesting of one expression or statement (D-fe-10 in DECISIONS): rustpython
/// parses and drops 1,200 levels in a debug build on the CLI's 8 MiB main thread.
pub const MAX_NESTING: usize = 1200;

/// Checks the size and nesting bounds of `text` (file `file`).
pub fn check(file: FileId, text: &str) -> Result<(), Diagnostics> {
    if text.len() > MAX_SOURCE_BYTES {
        return Err(Diagnostic::error(
            Span::new(file, 0, 0),
            format!("the source is {} bytes, more than the limit of {MAX_SOURCE_BYTES}", text.len()),
        )
        .into());
    }
    // Per open bracket, the operators seen at that level since its last separator; index 0 is
    // the statement level.
    let mut levels: Vec<usize> = vec![0];
    let mut indent = 0usize;
    let mut depth = 0usize;
    for item in lexer::lex(text, Mode::Module) {
        // A lexical error is the parser's to report, with its own position.
        let Ok((tok, range)) = item else { break };
        let top = levels.len() - 1;
        match tok {
            Tok::Lpar | Tok::Lsqb | Tok::Lbrace => {
                levels[top] += 1;
                depth += 1;
                levels.push(0);
                depth += 1;
            }
            Tok::Rpar | Tok::Rsqb | Tok::Rbrace => {
                if top > 0 {
                    depth -= levels.pop().unwrap_or(0) + 1;
                }
            }
            Tok::Comma | Tok::Colon | Tok::Semi | Tok::Equal | Tok::Rarrow => {
                depth -= std::mem::take(&mut levels[top]);
            }
            tok if is_assign(&tok) => depth -= std::mem::take(&mut levels[top]),
            Tok::Newline => {
                // The end of a logical line closes everything (brackets cannot span it).
                levels.truncate(1);
                levels[0] = 0;
                depth = 0;
            }
            Tok::Indent => indent += 1,
            Tok::Dedent => indent = indent.saturating_sub(1),
            Tok::Name { .. }
            | Tok::Int { .. }
            | Tok::Float { .. }
            | Tok::Complex { .. }
            | Tok::String { .. }
            | Tok::True
            | Tok::False
            | Tok::None
            | Tok::Ellipsis
            | Tok::EndOfFile
            | Tok::StartModule => {}
            _ => {
                levels[top] += 1;
                depth += 1;
            }
        }
        if depth + 2 * indent > MAX_NESTING {
            let span = Span::new(file, range.start().to_u32(), range.end().to_u32());
            return Err(Diagnostic::error(span, format!("expression nests deeper than {MAX_NESTING}"))
                .with_note("split it into smaller expressions (intermediate variables) or functions")
                .into());
        }
    }
    Ok(())
}

fn is_assign(t: &Tok) -> bool {
    matches!(
        t,
        Tok::PlusEqual
            | Tok::MinusEqual
            | Tok::StarEqual
            | Tok::SlashEqual
            | Tok::PercentEqual
            | Tok::AmperEqual
            | Tok::VbarEqual
            | Tok::CircumflexEqual
            | Tok::LeftShiftEqual
            | Tok::RightShiftEqual
            | Tok::DoubleStarEqual
            | Tok::DoubleSlashEqual
            | Tok::AtEqual
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nests(src: &str) -> bool {
        check(FileId(0), src).is_err()
    }

    #[test]
    fn deep_brackets_chains_and_blocks_are_refused_shallow_ones_kept() {
        let n = |k: usize| format!("x = {}{}\n", "[".repeat(k), "]".repeat(k));
        assert!(!nests(&n(590)));
        assert!(nests(&n(610)));
        let chain = |k: usize, op: &str| format!("x = 1{}\n", format!(" {op} 1").repeat(k));
        assert!(!nests(&chain(1150, "+")));
        assert!(nests(&chain(1250, "+")));
        assert!(nests(&format!("x = {}1\n", "not ".repeat(1250))));
        assert!(nests(&format!("x = a{}\n", "[0]".repeat(1250))));
        assert!(nests(&format!("x = a{}\n", ".b".repeat(1250))));
        // Siblings do not add up: a long list, many arguments, many statements.
        let list = format!("x = [{}]\n", vec!["1 + 2"; 5000].join(", "));
        assert!(!nests(&list));
        assert!(!nests(&"y = a + b * c\n".repeat(5000)));
    }

    #[test]
    fn the_diagnostic_points_at_the_token_that_went_over() {
        let src = format!("x = {}\n", "(".repeat(650));
        let d = check(FileId(0), &src).unwrap_err();
        let d = d.iter().next().unwrap();
        assert_eq!(d.message, format!("expression nests deeper than {MAX_NESTING}"));
        assert_eq!(&src[d.span.lo as usize..d.span.hi as usize], "(");
    }
}
