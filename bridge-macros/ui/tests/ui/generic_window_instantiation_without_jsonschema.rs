use bridge_runtime::prelude::*;

#[bridge_window(title = "Editor")]
struct Editor<T> {
    #[bridge(custom)]
    doc: T,
}

#[bridge_actions]
impl<T> Editor<T> {
    /// Set the document.
    #[bridge_action]
    fn set_doc(&mut self, doc: T) {
        self.doc = doc;
    }
}

#[derive(Serialize, Deserialize)]
struct Doc {
    text: String,
}

fn main() {
    let _ = Bridge::builder("app", "1.0").window::<Editor<Doc>>();
}
