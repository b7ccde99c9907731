//! A terminal desktop companion (spec CP): two characters, a few styles, six capabilities, a
//! private Unix socket for paired clients, and this terminal as the "screen" and keyboard.
//!
//! ```text
//! cargo run --example desk_companion -- --data ./desk-data
//! ```
//!
//! Bubbles, progress bars and questions appear here; answer questions by typing. Pairing
//! requests from clients (`companion pair …`) must be approved here, with `/approve N` (or
//! refused with `/deny N`), never by a line that could be meant for a question; a request whose
//! client stopped waiting is taken off the screen at once. Type `/help` for the user's own
//! controls (hide, pause, reduced motion, character, `/revoke`).
//!
//! A second companion on a socket that is in use, or on a data directory another companion
//! holds, stops before it creates or changes anything.

mod caps;

use bridge_runtime::catalog::Scope;
use bridge_runtime::companion::{
    Auth, AuthConfig, CredentialStore, Engine, HideReason, PairingApprover, PairingReply, PairingRequest, Presentation,
    Presenter, SqliteStore, bind_private, default_socket_path, ensure_private_dir, serve_listener,
};
use bridge_runtime::model::escape_invisible;
use clap::Parser;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// A terminal desktop companion speaking the companion protocol on a Unix socket.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// The Unix socket to listen on (default: `$COMPANION_SOCKET` when set, else
    /// `$XDG_RUNTIME_DIR/bridge-companion/companion.sock`; its directory is created private,
    /// mode 0700).
    #[arg(long)]
    socket: Option<PathBuf>,
    /// Where requests, results and paired clients are stored (created with mode 0700).
    #[arg(long, default_value = "desk-companion-data")]
    data: PathBuf,
}

/// What the console task reacts to.
enum Event {
    Show(Presentation),
    Update(Presentation),
    Hide(String, HideReason),
    Pair(PairingRequest, PairingReply),
    /// Pairing request N can no longer be answered (its client went away, or it timed out).
    PairingClosed(u32),
    Line(String),
    InputClosed,
}

/// Renders requests in this terminal (the host's presentation, CP-1-2).
struct TerminalPresenter(UnboundedSender<Event>);

impl Presenter for TerminalPresenter {
    fn show(&self, p: &Presentation, _: &Engine) {
        let _ = self.0.send(Event::Show(p.clone()));
    }
    fn update(&self, p: &Presentation, _: &Engine) {
        let _ = self.0.send(Event::Update(p.clone()));
    }
    fn hide(&self, request_id: &str, why: HideReason, _: &Engine) {
        let _ = self.0.send(Event::Hide(request_id.to_owned(), why));
    }
}

/// Asks the person at this terminal to approve pairings (CP-5-11): never automatic.
struct TerminalApprover(UnboundedSender<Event>);

impl PairingApprover for TerminalApprover {
    fn review(&self, request: PairingRequest, reply: PairingReply) {
        let _ = self.0.send(Event::Pair(request, reply));
    }
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    if let Err(e) = run(args).await {
        eprintln!("desk_companion: {e}");
        std::process::exit(1);
    }
}

/// Removes the socket file this companion bound when it stops, also after a failed start.
struct BoundSocket(PathBuf);

impl Drop for BoundSocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    // Nothing is created or changed before this companion knows it can run: first the socket
    // (one another companion serves is left alone and stops us here), then the data directory's
    // lock, and only then the databases.
    let socket = args
        .socket
        .or_else(|| std::env::var_os("COMPANION_SOCKET").filter(|p| !p.is_empty()).map(PathBuf::from))
        .unwrap_or_else(default_socket_path);
    let listener = bind_private(&socket).map_err(|e| format!("cannot listen on {}: {e}", socket.display()))?;
    let _bound = BoundSocket(socket.clone());
    ensure_private_dir(&args.data)
        .map_err(|e| format!("cannot use {} as a private directory: {e}", args.data.display()))?;
    let _lock = lock_data(&args.data)?;
    let (tx, rx) = unbounded_channel();

    // The one registry: the socket API, `rpc.discover` and the exported files all read it.
    let catalog = std::sync::Arc::new(std::sync::RwLock::new(caps::catalog()?));
    let engine = Engine::builder(catalog)
        .store(SqliteStore::open(args.data.join("requests.db"))?)
        .presenter(TerminalPresenter(tx.clone()))
        .start()?;
    engine.set_current_character("robot");
    let auth = Auth::new(
        CredentialStore::open(args.data.join("clients.db"))?,
        TerminalApprover(tx.clone()),
        AuthConfig::default(),
    )?;

    // Listening before the socket is announced: a client started at once finds it.
    println!("Desk companion: Robo is on your desk. Clients connect to {}", socket.display());
    let scopes: Vec<&str> = Scope::ALL.iter().map(|s| s.as_str()).collect();
    println!(
        "Pair a client with: companion pair --name NAME --scopes {} --profile NAME --socket {}",
        scopes.join(","),
        socket.display()
    );
    println!("Type /help for your controls.");
    spawn_stdin_reader(tx.clone());

    let console = tokio::spawn(console(rx, tx, engine.clone(), auth.clone()));
    tokio::select! {
        () = serve_listener(engine, auth, listener) => {}
        _ = tokio::signal::ctrl_c() => println!("\nBye."),
        _ = console => println!("Bye."),
    }
    Ok(())
}

/// Holds `data/lock` exclusively while this companion runs, so two companions never share a
/// data directory. Errors: another companion holds it, or it cannot be opened.
fn lock_data(data: &std::path::Path) -> Result<std::fs::File, String> {
    let path = data.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(format!("another desk companion uses {}; stop it first", data.display()))
        }
        Err(std::fs::TryLockError::Error(e)) => Err(format!("cannot lock {}: {e}", path.display())),
    }
}

fn spawn_stdin_reader(tx: UnboundedSender<Event>) {
    std::thread::spawn(move || {
        let mut line = String::new();
        loop {
            line.clear();
            match std::io::stdin().read_line(&mut line) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Event::InputClosed);
                    return;
                }
                Ok(_) => {
                    if tx.send(Event::Line(line.trim().to_owned())).is_err() {
                        return;
                    }
                }
            }
        }
    });
}

/// A client's question waiting for the user's next line; `client` is the asking client's id.
enum Prompt {
    Choice { request_id: String, client: String, options: Vec<(String, String)> },
    Text { request_id: String, client: String },
}

impl Prompt {
    fn request_id(&self) -> &str {
        match self {
            Prompt::Choice { request_id, .. } | Prompt::Text { request_id, .. } => request_id,
        }
    }

    fn client(&self) -> &str {
        match self {
            Prompt::Choice { client, .. } | Prompt::Text { client, .. } => client,
        }
    }
}

/// The open questions, in the order they are asked, and the clients revoked while this
/// companion runs: a revoked client's questions leave the desk at once and never come back,
/// even when the engine's own notice of their end (or a show queued before the revocation)
/// arrives later (CP-4-22).
#[derive(Default)]
struct Questions {
    open: VecDeque<Prompt>,
    revoked: std::collections::HashSet<String>,
}

impl Questions {
    /// Withdraws every open question of `client_id` and refuses its later ones; returns how many
    /// were withdrawn.
    fn revoke(&mut self, client_id: &str) -> usize {
        self.revoked.insert(client_id.to_owned());
        let before = self.open.len();
        self.open.retain(|q| q.client() != client_id);
        before - self.open.len()
    }
}

/// Pairing requests waiting for the user, by the number the user types in `/approve N` or
/// `/deny N`. They never share the input line with questions: a plain line only ever answers
/// the open question, so an answer meant for a question (which its asker may end at any moment)
/// can never approve a pairing.
#[derive(Default)]
struct Pairings {
    next: u32,
    waiting: BTreeMap<u32, (PairingRequest, PairingReply)>,
}

impl Pairings {
    /// Shows the request and keeps it as number N; `closed` hears when it can no longer be
    /// answered, so a withdrawn request leaves the screen at once.
    fn add(&mut self, request: PairingRequest, reply: PairingReply, closed: &UnboundedSender<Event>) {
        self.next += 1;
        let n = self.next;
        let (on_closed, closed) = (reply.on_closed(), closed.clone());
        tokio::spawn(async move {
            on_closed.await;
            let _ = closed.send(Event::PairingClosed(n));
        });
        let scopes: Vec<&str> = request.scopes.iter().map(|s| s.as_str()).collect();
        let pid = request.peer_pid.map(|p| format!(", process {p}")).unwrap_or_default();
        println!(
            "Pairing request {n}: a client calling itself \"{}\"{pid} asks to pair with scopes [{}]. Its requests and \
             results are kept at least 24 hours, then deleted; `/revoke` undoes a pairing. Type /approve {n} to \
             approve or /deny {n} to refuse.",
            request.shown_name(),
            scopes.join(", ")
        );
        self.waiting.insert(n, (request, reply));
    }

    /// Takes request `n` off the screen if it is still waiting (its client went away or the
    /// time to decide ran out; one the user decided is gone already), saying so.
    fn closed(&mut self, n: u32) {
        if self.waiting.remove(&n).is_some() {
            println!("  (pairing request {n} withdrawn: the client stopped waiting, nothing to decide)");
        }
    }

    /// `/approve N` or `/deny N`.
    fn decide(&mut self, number: Option<&str>, approve: bool) {
        let Some((n, (request, reply))) =
            number.and_then(|n| n.parse::<u32>().ok()).and_then(|n| self.waiting.remove_entry(&n))
        else {
            let open: Vec<String> = self.waiting.keys().map(u32::to_string).collect();
            println!("  No such pairing request; waiting: [{}]", open.join(", "));
            return;
        };
        if !approve {
            reply.deny();
            println!("  refused pairing request {n}");
        } else if reply.approve_as_requested(&request) {
            println!("  paired \"{}\"", request.shown_name());
        } else {
            println!("  too late: the client stopped waiting; nothing was paired");
        }
    }
}

/// The terminal: prints what the engine shows, feeds the user's answers back.
async fn console(mut rx: UnboundedReceiver<Event>, tx: UnboundedSender<Event>, engine: Engine, auth: Auth) {
    let mut questions = Questions::default();
    let mut pairings = Pairings::default();
    while let Some(event) = rx.recv().await {
        let prompts = &mut questions.open;
        match event {
            // A show queued before its client was revoked: the request is being cancelled.
            Event::Show(p) if questions.revoked.contains(&p.source.client_id) => {}
            Event::Show(p) => show(&p, &engine, prompts),
            Event::Update(p) => {
                if p.capability == "progress.show" {
                    println!("{} {}", who(&p), progress_bar(&p.params));
                }
            }
            Event::Hide(id, why) => {
                let before = prompts.len();
                prompts.retain(|q| q.request_id() != id);
                if prompts.len() != before {
                    let reason = why.reason.map(|r| json!(r)).unwrap_or(Value::Null);
                    println!("  (question {id} ended: {} {reason})", json!(why.state));
                    ask_next(prompts);
                }
            }
            Event::Pair(request, reply) => pairings.add(request, reply, &tx),
            Event::PairingClosed(n) => pairings.closed(n),
            // `/command` is always the user's own control, even while a question is open, so a
            // client can never lock the user out by keeping questions on screen.
            Event::Line(line) if line.starts_with('/') && line != "/close" => {
                if !command(&line[1..], &engine, &auth, &mut pairings, &mut questions) {
                    return;
                }
                ask_next(&questions.open);
            }
            Event::Line(line) => match prompts.pop_front() {
                Some(prompt) => {
                    if let Some(again) = answer(prompt, &line, &engine) {
                        prompts.push_front(again);
                    }
                    ask_next(prompts);
                }
                None => {
                    let line = line.strip_prefix('/').unwrap_or(&line);
                    if !command(line, &engine, &auth, &mut pairings, &mut questions) {
                        return;
                    }
                }
            },
            Event::InputClosed => {
                println!("(stdin closed: questions and pairings can no longer be answered here; still serving)");
            }
        }
    }
}

/// Client-supplied text as plain text (CP-6-6, OQ-CP-20): control characters (escape sequences,
/// newlines, carriage returns), bidirectional overrides, zero-width and other invisible
/// characters are shown escaped (`\u{200b}`), never interpreted by the terminal.
fn plain(s: &str) -> String {
    escape_invisible(s).into_owned()
}

fn who(p: &Presentation) -> String {
    let style = p.style.as_deref().unwrap_or("plain");
    format!("[{} · {style}]", p.character)
}

fn show(p: &Presentation, engine: &Engine, prompts: &mut VecDeque<Prompt>) {
    let from = plain(&p.source.label);
    let text = |key: &str| plain(p.params.get(key).and_then(Value::as_str).unwrap_or(""));
    match p.capability.as_str() {
        "notice.show" => {
            let tone = plain(p.params.get("tone").and_then(Value::as_str).unwrap_or("information"));
            println!("{} ({tone}) {}   — from {from}", who(p), text("text"));
        }
        "progress.show" => println!("{} {}   — from {from}", who(p), progress_bar(&p.params)),
        "interaction.choose" => {
            let options: Vec<(String, String)> = p.params["options"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|o| (o["id"].as_str().unwrap_or("").to_owned(), plain(o["label"].as_str().unwrap_or(""))))
                .collect();
            println!("{} asks, for {from}: {}", who(p), text("title"));
            prompts.push_back(Prompt::Choice {
                request_id: p.request_id.clone(),
                client: p.source.client_id.clone(),
                options,
            });
            if prompts.len() == 1 {
                ask_next(prompts);
            }
        }
        "interaction.text" => {
            println!("{} asks, for {from}: {}", who(p), text("prompt"));
            prompts.push_back(Prompt::Text { request_id: p.request_id.clone(), client: p.source.client_id.clone() });
            if prompts.len() == 1 {
                ask_next(prompts);
            }
        }
        "animation.celebrate" | "vendor.com.example.desk.tail_swish" => {
            let what = if p.capability == "animation.celebrate" { "celebrates!" } else { "swishes its tail" };
            println!("{} *{} {what}* {}   — from {from}", who(p), p.character, text("message"));
            finish_later(engine, &p.request_id, Duration::from_millis(1500));
        }
        other => println!("{} ({other})   — from {from}", who(p)),
    }
    // The content is on screen now (CP-3-14).
    let _ = engine.displayed(&p.request_id);
}

fn finish_later(engine: &Engine, id: &str, after: Duration) {
    let (engine, id) = (engine.downgrade(), id.to_owned());
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        if let Some(engine) = engine.upgrade() {
            let _ = engine.finished(&id);
        }
    });
}

fn progress_bar(params: &Value) -> String {
    let value = params.get("value").and_then(Value::as_f64).unwrap_or(0.0).clamp(0.0, 1.0);
    let filled = (value * 20.0).round() as usize;
    let label = plain(params.get("label").and_then(Value::as_str).unwrap_or(""));
    format!("{label} [{}{}] {:.0}%", "#".repeat(filled), "-".repeat(20 - filled), value * 100.0)
}

fn ask_next(prompts: &VecDeque<Prompt>) {
    match prompts.front() {
        Some(Prompt::Choice { options, .. }) => {
            let list: Vec<String> =
                options.iter().enumerate().map(|(i, (_, label))| format!("{}) {label}", i + 1)).collect();
            println!("  {}   — type a number, or /close", list.join("  "));
        }
        Some(Prompt::Text { .. }) => println!("  type your answer, or /close"),
        None => {}
    }
}

/// Applies the user's `line` to `prompt`; returns the prompt again when the line did not answer it.
fn answer(prompt: Prompt, line: &str, engine: &Engine) -> Option<Prompt> {
    match prompt {
        Prompt::Choice { request_id, client, options } => {
            if line == "/close" || line == "x" {
                let _ = engine.view_closed(&request_id);
                println!("  closed: the asker gets a cancellation, not an answer");
                return None;
            }
            match line.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| options.get(i)) {
                Some((id, label)) => {
                    println!("  you picked: {label}");
                    let _ = engine.user_responded(&request_id, json!({"selectedId": id}));
                    None
                }
                None => Some(Prompt::Choice { request_id, client, options }),
            }
        }
        Prompt::Text { request_id, client } => {
            if line.is_empty() {
                return Some(Prompt::Text { request_id, client });
            }
            if line == "/close" {
                let _ = engine.view_closed(&request_id);
                println!("  closed: the asker gets a cancellation, not an answer");
            } else if engine.user_responded(&request_id, json!({"text": line})).is_err() {
                println!("  (that answer was not accepted)");
            }
            None
        }
    }
}

/// The user's own controls. Returns false to quit.
fn command(line: &str, engine: &Engine, auth: &Auth, pairings: &mut Pairings, questions: &mut Questions) -> bool {
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (None, _) => {}
        (Some("help"), _) => println!(
            "/approve N | /deny N | /hide | /show | /pause | /resume | /motion reduce|normal | /character robot|cat | /clients | \
             /revoke CLIENT_ID | /close | /quit \
             (the slash is optional when no question is open; /close closes the open question)"
        ),
        (Some("approve"), n) => pairings.decide(n, true),
        (Some("deny"), n) => pairings.decide(n, false),
        (Some("hide"), _) => {
            engine.set_visible(false);
            println!("Hidden: new requests are refused, open ones cancelled.");
        }
        (Some("show"), _) => {
            engine.set_visible(true);
            println!("Back on the desk.");
        }
        (Some("pause"), _) => {
            engine.set_external_paused(true);
            println!("External requests paused: new ones are refused, open ones cancelled.");
        }
        (Some("resume"), _) => {
            engine.set_external_paused(false);
            println!("External requests resumed.");
        }
        (Some("motion"), Some(mode)) => {
            engine.set_reduced_motion(mode == "reduce");
            println!("Reduced motion: {}", mode == "reduce");
        }
        (Some("character"), Some(id)) => {
            if engine.set_current_character(id) {
                println!("Now showing {id}.");
            } else {
                println!("No character {id}.");
            }
        }
        (Some("clients"), _) => {
            for c in auth.clients() {
                let scopes: Vec<&str> = c.scopes.iter().map(|s| s.as_str()).collect();
                println!("{}  {}  [{}]", c.client_id, plain(&c.label), scopes.join(", "));
            }
        }
        (Some("revoke"), Some(id)) => {
            // The key is refused and its requests cancelled in this process whatever the store
            // says, so its questions leave the desk in every case but "no such client".
            let outcome = auth.revoke(engine, id);
            let withdrawn = if matches!(outcome, Ok(false)) { 0 } else { questions.revoke(id) };
            match outcome {
                Ok(true) => {
                    println!("Revoked {id}: its open requests were cancelled ({withdrawn} open question(s) withdrawn).")
                }
                Ok(false) => println!("No client {id}."),
                Err(e) => println!(
                    "Revoked {id} until this companion stops, but the revocation could not be stored ({e}): the key \
                     works again after a restart; type /revoke {id} again to retry ({withdrawn} open question(s) \
                     withdrawn)."
                ),
            }
        }
        (Some("quit"), _) => return false,
        // `/close` reaches here only when no question is open.
        (Some("close"), _) => println!("No open question to close."),
        (Some(other), _) => println!("Unknown command {}; type /help.", plain(other)),
    }
    true
}
