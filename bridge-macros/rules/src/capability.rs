//! How a capability's declared properties fit its kind: interaction type (CP-2-18), completion
//! (CP-2-15, CP-3-13, CP-3-15, CP-3-16), display time (CP-2-15, CP-3-19), queue mode (CP-4-11)
//! and the declared fallback (CP-2-29). `CapabilityBuilder::build` (run time) and
//! `#[bridge_actions(companion)]` (compile time) both call these.
//!
//! Every value is the wire string of one of the crate's closed lists: `kind` is one of
//! [`CAPABILITY_KINDS`](crate::CAPABILITY_KINDS), `interaction` of
//! [`INTERACTIONS`](crate::INTERACTIONS), `completion` of [`COMPLETIONS`](crate::COMPLETIONS),
//! `mode` of [`QUEUE_MODES`](crate::QUEUE_MODES), `when` of
//! [`FALLBACK_REASONS`](crate::FALLBACK_REASONS). A problem's `reason()` is the run-time text (a
//! `SpecError::Inconsistent` reason), its `explanation()` the compile-time one.

/// The kind whose requests ask the user something (CP-2-17): the only one with an interaction
/// type other than `none` and the only one completing by `user_response`.
const INTERACTION_KIND: &str = "interaction";

/// How long a `displayed` request stays on screen when the capability does not say, ms
/// (descriptor `limits.displayMs`, CP-2-15, CP-3-19).
pub const DEFAULT_DISPLAY_MS: u64 = 5_000;

/// Why an interaction type does not fit the kind (CP-2-18).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InteractionProblem<'a> {
    /// Kind `interaction` without an interaction type.
    Missing,
    /// Kind `interaction` with interaction type `none`.
    NoneForInteraction,
    /// Another kind with interaction type `choice` or `text`.
    NeedsInteractionKind {
        /// The declared kind, e.g. `"notice"`.
        kind: &'a str,
        /// The declared interaction type, e.g. `"choice"`.
        interaction: &'a str,
    },
}

impl InteractionProblem<'_> {
    /// The run-time reason, e.g. "kind `notice` must have interaction type `none`".
    pub fn reason(self) -> String {
        match self {
            InteractionProblem::Missing | InteractionProblem::NoneForInteraction => {
                "kind `interaction` needs interaction type `choice` or `text`".to_owned()
            }
            InteractionProblem::NeedsInteractionKind { kind, .. } => {
                format!("kind `{kind}` must have interaction type `none`")
            }
        }
    }

    /// The compile-time explanation, e.g. "interaction type \"choice\" needs kind
    /// \"interaction\"; a \"notice\" capability has interaction type \"none\" (CP-2-18)".
    pub fn explanation(self) -> String {
        match self {
            InteractionProblem::Missing => {
                "kind \"interaction\" needs its interaction type: `interaction = \"choice\"` or `\"text\"` (CP-2-18)"
                    .to_owned()
            }
            InteractionProblem::NoneForInteraction => {
                "kind \"interaction\" needs interaction type \"choice\" or \"text\", not \"none\" (CP-2-18)".to_owned()
            }
            InteractionProblem::NeedsInteractionKind { kind, interaction } => format!(
                "interaction type \"{interaction}\" needs kind \"interaction\"; a \"{kind}\" capability has \
                 interaction type \"none\" (CP-2-18)"
            ),
        }
    }
}

/// Checks a declared interaction type (`None` when not declared) against the kind: kind
/// `interaction` needs `choice` or `text`; every other kind has `none`, declared or not
/// (CP-2-18).
pub fn check_interaction<'a>(kind: &'a str, interaction: Option<&'a str>) -> Result<(), InteractionProblem<'a>> {
    match (kind == INTERACTION_KIND, interaction) {
        (true, None) => Err(InteractionProblem::Missing),
        (true, Some("none")) => Err(InteractionProblem::NoneForInteraction),
        (false, Some(interaction)) if interaction != "none" => {
            Err(InteractionProblem::NeedsInteractionKind { kind, interaction })
        }
        _ => Ok(()),
    }
}

/// The completion of a kind that declares none (CP-2-15): animation → `animation_end`, notice →
/// `displayed`, progress → `caller_completes`, interaction → `user_response`. Always passes
/// [`check_completion`]. A string outside `CAPABILITY_KINDS` gets `user_response`, which fails
/// it.
pub fn default_completion(kind: &str) -> &'static str {
    match kind {
        "animation" => "animation_end",
        "notice" => "displayed",
        "progress" => "caller_completes",
        _ => "user_response",
    }
}

/// Why a completion does not fit the kind: `user_response` is for, and required by, kind
/// `interaction` (CP-3-13, CP-3-15, CP-3-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionProblem<'a> {
    /// `user_response` on another kind.
    UserResponseOutsideInteraction {
        /// The declared kind, e.g. `"notice"`.
        kind: &'a str,
    },
    /// Kind `interaction` with a completion other than `user_response`.
    InteractionWithoutUserResponse,
}

impl CompletionProblem<'_> {
    /// The run-time reason (the same for both problems).
    pub fn reason(self) -> &'static str {
        "completion `user_response` is for, and required by, kind `interaction`"
    }

    /// The compile-time explanation, naming the completions the kind can have.
    pub fn explanation(self) -> String {
        match self {
            CompletionProblem::UserResponseOutsideInteraction { kind } => format!(
                "completion \"user_response\" is for kind \"interaction\" only; a \"{kind}\" capability completes \
                 with \"displayed\", \"animation_end\" or \"caller_completes\" (CP-3-15)"
            ),
            CompletionProblem::InteractionWithoutUserResponse => {
                "kind \"interaction\" completes only by a user answer: `completion = \"user_response\"` \
                 (CP-3-13, CP-3-16)"
                    .to_owned()
            }
        }
    }
}

/// Checks a completion against the kind: `user_response` if and only if kind `interaction`
/// (CP-3-13, CP-3-15, CP-3-16).
pub fn check_completion<'a>(kind: &'a str, completion: &str) -> Result<(), CompletionProblem<'a>> {
    match (kind == INTERACTION_KIND, completion == "user_response") {
        (false, true) => Err(CompletionProblem::UserResponseOutsideInteraction { kind }),
        (true, false) => Err(CompletionProblem::InteractionWithoutUserResponse),
        _ => Ok(()),
    }
}

/// Why a declared display time does not fit (CP-2-15, CP-3-19).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisplayMsProblem<'a> {
    /// A display time on a completion other than `displayed`.
    NotDisplayed {
        /// The capability's completion, e.g. `"animation_end"`.
        completion: &'a str,
    },
    /// A display time of 0 ms.
    Zero,
}

impl DisplayMsProblem<'_> {
    /// The run-time reason, e.g. "displayMs must be at least 1".
    pub fn reason(self) -> &'static str {
        match self {
            DisplayMsProblem::NotDisplayed { .. } => "displayMs applies only to completion `displayed`",
            DisplayMsProblem::Zero => "displayMs must be at least 1",
        }
    }

    /// The compile-time explanation, about the `display_ms` key.
    pub fn explanation(self) -> String {
        match self {
            DisplayMsProblem::NotDisplayed { completion } => format!(
                "`display_ms` applies only to completion \"displayed\" (this capability completes with \
                 \"{completion}\")"
            ),
            DisplayMsProblem::Zero => "`display_ms` must be at least 1".to_owned(),
        }
    }
}

/// Checks a declared display time, ms (`None` when not declared), against the (declared or
/// default) completion and returns the descriptor's `limits.displayMs`: for `displayed` the
/// declared time, at least 1, or [`DEFAULT_DISPLAY_MS`]; for any other completion `None`, and
/// declaring one is an error (CP-2-15, CP-3-19).
pub fn check_display_ms(completion: &str, display_ms: Option<u64>) -> Result<Option<u64>, DisplayMsProblem<'_>> {
    match (completion == "displayed", display_ms) {
        (true, None) => Ok(Some(DEFAULT_DISPLAY_MS)),
        (true, Some(0)) => Err(DisplayMsProblem::Zero),
        (true, Some(ms)) => Ok(Some(ms)),
        (false, None) => Ok(None),
        (false, Some(_)) => Err(DisplayMsProblem::NotDisplayed { completion }),
    }
}

/// An interaction declared `evictable`: interactions are never evicted (CP-4-11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvictableInteraction;

impl EvictableInteraction {
    /// The run-time reason.
    pub fn reason(self) -> &'static str {
        "interactions are never evicted (CP-4-11): use queue mode `queue`"
    }

    /// The compile-time explanation, about the `queue` key.
    pub fn explanation(self) -> &'static str {
        "interactions are never evicted (CP-4-11): use `queue = \"queue\"`"
    }
}

/// Checks a queue mode against the kind: kind `interaction` is never `evictable` (CP-4-11).
pub fn check_queue_mode(kind: &str, mode: &str) -> Result<(), EvictableInteraction> {
    if kind == INTERACTION_KIND && mode == "evictable" { Err(EvictableInteraction) } else { Ok(()) }
}

/// Why a declared fallback (`fallback.capability`, `fallback.when`) is refused (CP-2-29).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackProblem {
    /// The alternative is the capability itself.
    ToItself,
    /// `when` lists no situation.
    NoSituation,
    /// `when` lists `style_unsupported`, which belongs to a style's fallback.
    StyleSituation,
}

impl FallbackProblem {
    /// The run-time reason, e.g. "fallback needs at least one `when` situation".
    pub fn reason(self) -> &'static str {
        match self {
            FallbackProblem::ToItself => "a capability cannot fall back to itself",
            FallbackProblem::NoSituation => "fallback needs at least one `when` situation",
            FallbackProblem::StyleSituation => "style fallbacks are declared on the style, not the capability",
        }
    }

    /// The compile-time explanation, about the `fallback(…)` keys.
    pub fn explanation(self) -> &'static str {
        match self {
            FallbackProblem::ToItself => "a capability cannot fall back to itself",
            FallbackProblem::NoSituation => "`when` needs at least one situation (CP-2-29)",
            FallbackProblem::StyleSituation => {
                "\"style_unsupported\" fallbacks are declared on the style (`StyleSpec::fallback`), not on the \
                 capability"
            }
        }
    }
}

/// Checks a fallback's alternative `target` against the declaring capability `id`: not itself
/// (CP-2-29). The target's own id rules are [`check_capability_id`](crate::check_capability_id)'s.
pub fn check_fallback_target(id: &str, target: &str) -> Result<(), FallbackProblem> {
    if target == id { Err(FallbackProblem::ToItself) } else { Ok(()) }
}

/// Checks how many situations a fallback's `when` lists: at least one (CP-2-29).
pub fn check_fallback_situation_count(count: usize) -> Result<(), FallbackProblem> {
    if count == 0 { Err(FallbackProblem::NoSituation) } else { Ok(()) }
}

/// Checks one situation of a capability fallback's `when`: not `style_unsupported`, which a
/// style's own fallback handles (`StyleSpec::fallback`, CP-2-29).
pub fn check_fallback_situation(when: &str) -> Result<(), FallbackProblem> {
    if when == "style_unsupported" { Err(FallbackProblem::StyleSituation) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CAPABILITY_KINDS, COMPLETIONS, FALLBACK_REASONS, INTERACTIONS, QUEUE_MODES};

    /// CP-2-18: `interaction` needs `choice`/`text`; the other kinds have `none`.
    #[test]
    fn interaction_against_kind() {
        for kind in CAPABILITY_KINDS {
            for interaction in INTERACTIONS.map(Some).into_iter().chain([None]) {
                let got = check_interaction(kind, interaction);
                let want = match (kind, interaction) {
                    ("interaction", None) => Err(InteractionProblem::Missing),
                    ("interaction", Some("none")) => Err(InteractionProblem::NoneForInteraction),
                    ("interaction", Some(_)) | (_, None | Some("none")) => Ok(()),
                    (kind, Some(interaction)) => Err(InteractionProblem::NeedsInteractionKind { kind, interaction }),
                };
                assert_eq!(got, want, "{kind} {interaction:?}");
            }
        }
        let p = InteractionProblem::NeedsInteractionKind { kind: "notice", interaction: "text" };
        assert_eq!(p.reason(), "kind `notice` must have interaction type `none`");
        assert_eq!(
            p.explanation(),
            "interaction type \"text\" needs kind \"interaction\"; a \"notice\" capability has interaction type \
             \"none\" (CP-2-18)"
        );
        assert_eq!(InteractionProblem::Missing.reason(), InteractionProblem::NoneForInteraction.reason());
    }

    /// CP-2-15, CP-3-13, CP-3-15, CP-3-16: each kind's default completion, and `user_response`
    /// exactly for `interaction`.
    #[test]
    fn completion_against_kind() {
        let defaults: Vec<&str> = CAPABILITY_KINDS.iter().map(|k| default_completion(k)).collect();
        assert_eq!(defaults, ["animation_end", "displayed", "caller_completes", "user_response"]);
        for kind in CAPABILITY_KINDS {
            assert_eq!(check_completion(kind, default_completion(kind)), Ok(()), "{kind}");
            for completion in COMPLETIONS {
                let ok = (kind == "interaction") == (completion == "user_response");
                assert_eq!(check_completion(kind, completion).is_ok(), ok, "{kind} {completion}");
            }
        }
        assert_eq!(
            check_completion("notice", "user_response"),
            Err(CompletionProblem::UserResponseOutsideInteraction { kind: "notice" })
        );
        assert_eq!(
            check_completion("interaction", "displayed"),
            Err(CompletionProblem::InteractionWithoutUserResponse)
        );
        assert_eq!(
            CompletionProblem::InteractionWithoutUserResponse.reason(),
            "completion `user_response` is for, and required by, kind `interaction`"
        );
    }

    /// CP-2-15, CP-3-19: `displayMs` only with `displayed`, at least 1, 5000 by default.
    #[test]
    fn display_ms() {
        assert_eq!(check_display_ms("displayed", None), Ok(Some(DEFAULT_DISPLAY_MS)));
        assert_eq!(check_display_ms("displayed", Some(1)), Ok(Some(1)));
        assert_eq!(check_display_ms("displayed", Some(0)), Err(DisplayMsProblem::Zero));
        for completion in COMPLETIONS.into_iter().filter(|c| *c != "displayed") {
            assert_eq!(check_display_ms(completion, None), Ok(None), "{completion}");
            assert_eq!(
                check_display_ms(completion, Some(0)),
                Err(DisplayMsProblem::NotDisplayed { completion }),
                "{completion}"
            );
        }
        assert_eq!(
            DisplayMsProblem::NotDisplayed { completion: "animation_end" }.explanation(),
            "`display_ms` applies only to completion \"displayed\" (this capability completes with \"animation_end\")"
        );
        assert_eq!(DisplayMsProblem::Zero.reason(), "displayMs must be at least 1");
    }

    /// CP-4-11: interactions are never evictable; every other kind may be.
    #[test]
    fn queue_mode_against_kind() {
        for kind in CAPABILITY_KINDS {
            for mode in QUEUE_MODES {
                let ok = !(kind == "interaction" && mode == "evictable");
                assert_eq!(check_queue_mode(kind, mode).is_ok(), ok, "{kind} {mode}");
            }
        }
        assert_eq!(check_queue_mode("interaction", "evictable"), Err(EvictableInteraction));
    }

    /// CP-2-29: not to itself, at least one situation, never `style_unsupported`.
    #[test]
    fn fallbacks() {
        assert_eq!(check_fallback_target("notice.show", "notice.show"), Err(FallbackProblem::ToItself));
        assert_eq!(check_fallback_target("anim.wave", "notice.show"), Ok(()));
        assert_eq!(check_fallback_situation_count(0), Err(FallbackProblem::NoSituation));
        assert_eq!(check_fallback_situation_count(1), Ok(()));
        for when in FALLBACK_REASONS {
            let ok = when != "style_unsupported";
            assert_eq!(check_fallback_situation(when).is_ok(), ok, "{when}");
        }
        assert_eq!(
            FallbackProblem::StyleSituation.reason(),
            "style fallbacks are declared on the style, not the capability"
        );
    }

    /// The texts both sides printed before these rules were shared, byte for byte (the
    /// run-time ones are `SpecError::Inconsistent` reasons no other test pins).
    #[test]
    fn messages() {
        use CompletionProblem as C;
        use DisplayMsProblem as D;
        use FallbackProblem as F;
        use InteractionProblem as I;
        let reasons: [(String, &str); 11] = [
            (I::Missing.reason(), "kind `interaction` needs interaction type `choice` or `text`"),
            (I::NoneForInteraction.reason(), "kind `interaction` needs interaction type `choice` or `text`"),
            (
                I::NeedsInteractionKind { kind: "progress", interaction: "choice" }.reason(),
                "kind `progress` must have interaction type `none`",
            ),
            (
                C::UserResponseOutsideInteraction { kind: "notice" }.reason().into(),
                "completion `user_response` is for, and required by, kind `interaction`",
            ),
            (D::NotDisplayed { completion: "x" }.reason().into(), "displayMs applies only to completion `displayed`"),
            (D::Zero.reason().into(), "displayMs must be at least 1"),
            (EvictableInteraction.reason().into(), "interactions are never evicted (CP-4-11): use queue mode `queue`"),
            (F::ToItself.reason().into(), "a capability cannot fall back to itself"),
            (F::NoSituation.reason().into(), "fallback needs at least one `when` situation"),
            (F::StyleSituation.reason().into(), "style fallbacks are declared on the style, not the capability"),
            (
                C::InteractionWithoutUserResponse.reason().into(),
                C::UserResponseOutsideInteraction { kind: "" }.reason(),
            ),
        ];
        let explanations: [(String, &str); 10] = [
            (
                I::Missing.explanation(),
                "kind \"interaction\" needs its interaction type: `interaction = \"choice\"` or `\"text\"` (CP-2-18)",
            ),
            (
                I::NoneForInteraction.explanation(),
                "kind \"interaction\" needs interaction type \"choice\" or \"text\", not \"none\" (CP-2-18)",
            ),
            (
                C::UserResponseOutsideInteraction { kind: "animation" }.explanation(),
                "completion \"user_response\" is for kind \"interaction\" only; a \"animation\" capability completes \
                 with \"displayed\", \"animation_end\" or \"caller_completes\" (CP-3-15)",
            ),
            (
                C::InteractionWithoutUserResponse.explanation(),
                "kind \"interaction\" completes only by a user answer: `completion = \"user_response\"` (CP-3-13, \
                 CP-3-16)",
            ),
            (D::Zero.explanation(), "`display_ms` must be at least 1"),
            (
                EvictableInteraction.explanation().into(),
                "interactions are never evicted (CP-4-11): use `queue = \"queue\"`",
            ),
            (F::ToItself.explanation().into(), "a capability cannot fall back to itself"),
            (F::NoSituation.explanation().into(), "`when` needs at least one situation (CP-2-29)"),
            (
                F::StyleSituation.explanation().into(),
                "\"style_unsupported\" fallbacks are declared on the style (`StyleSpec::fallback`), not on the \
                 capability",
            ),
            (
                D::NotDisplayed { completion: "caller_completes" }.explanation(),
                "`display_ms` applies only to completion \"displayed\" (this capability completes with \
                 \"caller_completes\")",
            ),
        ];
        for (got, want) in reasons.iter().chain(&explanations) {
            assert_eq!(got, want);
        }
    }
}
