//! The host app's side of presentation: the [`Presenter`] trait the engine calls to show,
//! update and hide requests, and a [`ScriptedPresenter`] for tests.
//!
//! The engine calls the presenter from one task, in order, never while holding its own lock, so
//! a presenter may call back into the engine ([`Engine::displayed`], [`Engine::user_responded`],
//! [`Engine::view_closed`], [`Engine::finished`], [`Engine::presentation_failed`]) directly.

use super::Engine;
use super::model::{Presentation, RequestState, TerminalReason};
use tokio::sync::mpsc;

/// Why a presentation is taken down: the request's terminal state and reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HideReason {
    /// The terminal state.
    pub state: RequestState,
    /// The terminal reason (`None` for `completed`).
    pub reason: Option<TerminalReason>,
}

/// Implemented by the host app to render requests (CP-1-2, CP-7-11: local closures stay at this
/// boundary). Calls must not block for long; heavy work belongs on the UI thread.
pub trait Presenter: Send + Sync + 'static {
    /// The request got the display slot: show it, then call `engine.displayed(request_id)` once
    /// it is actually on screen (CP-3-14). `engine` is a handle; keep at most a
    /// [`Engine::downgrade`] of it.
    fn show(&self, presentation: &Presentation, engine: &Engine);
    /// The request's params changed (`requests.update`, e.g. a progress value, CP-3-26): update
    /// the existing view in place.
    fn update(&self, presentation: &Presentation, engine: &Engine);
    /// The request ended: remove its view (following the capability's `cancelBehavior`).
    fn hide(&self, request_id: &str, why: HideReason, engine: &Engine);
}

/// A shared presenter (the host keeps its own `Arc` to the same object).
impl<P: Presenter + ?Sized> Presenter for std::sync::Arc<P> {
    fn show(&self, presentation: &Presentation, engine: &Engine) {
        (**self).show(presentation, engine)
    }
    fn update(&self, presentation: &Presentation, engine: &Engine) {
        (**self).update(presentation, engine)
    }
    fn hide(&self, request_id: &str, why: HideReason, engine: &Engine) {
        (**self).hide(request_id, why, engine)
    }
}

/// A presenter call as recorded by [`ScriptedPresenter`].
#[derive(Debug, Clone, PartialEq)]
pub enum PresenterEvent {
    /// `show`.
    Show(Presentation),
    /// `update`.
    Update(Presentation),
    /// `hide`.
    Hide {
        /// The request.
        request_id: String,
        /// Why.
        why: HideReason,
    },
}

/// A presenter for tests: records every call on a channel and can act like a host that displays
/// instantly (`auto_display`) and whose animations end at once (`auto_finish`).
#[derive(Debug)]
pub struct ScriptedPresenter {
    tx: mpsc::UnboundedSender<PresenterEvent>,
    auto_display: bool,
    auto_finish: bool,
}

impl ScriptedPresenter {
    /// A presenter that only records; the test reports display, answers and closure itself.
    pub fn new() -> (Self, mpsc::UnboundedReceiver<PresenterEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx, auto_display: false, auto_finish: false }, rx)
    }

    /// Reports `displayed` as soon as a request is shown.
    pub fn auto_display(mut self, on: bool) -> Self {
        self.auto_display = on;
        self
    }

    /// Reports `finished` right after `displayed` for `animation_end` capabilities.
    pub fn auto_finish(mut self, on: bool) -> Self {
        self.auto_finish = on;
        self
    }
}

impl Presenter for ScriptedPresenter {
    fn show(&self, presentation: &Presentation, engine: &Engine) {
        let _ = self.tx.send(PresenterEvent::Show(presentation.clone()));
        if self.auto_display {
            let _ = engine.displayed(&presentation.request_id);
            if self.auto_finish && engine.completes_on_finish(&presentation.request_id) {
                let _ = engine.finished(&presentation.request_id);
            }
        }
    }

    fn update(&self, presentation: &Presentation, _engine: &Engine) {
        let _ = self.tx.send(PresenterEvent::Update(presentation.clone()));
    }

    fn hide(&self, request_id: &str, why: HideReason, _engine: &Engine) {
        let _ = self.tx.send(PresenterEvent::Hide { request_id: request_id.to_owned(), why });
    }
}
