//! The desk companion's exported descriptions (`examples/desk_companion/catalog/`) are up to date
//! with its code (CP-2-12, CP-2-13). Refresh with
//! `BRIDGE_EXPORT=1 cargo test -p bridge --test it export_desk_companion` and commit the diff.

use crate::desk_companion as caps;

use bridge_runtime::export;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/desk_companion/catalog");

#[test]
fn desk_companion_export_is_up_to_date() {
    export::assert_up_to_date(&caps::catalog().expect("the example's catalog"), DIR);
}

// CP-2-3, CP-2-15, CP-2-27: the exported capability list is the registry's: six capabilities,
// one vendor-namespaced, each with the characters that support it.
#[test]
fn desk_companion_export_content() {
    let files = export::render_all(&caps::catalog().unwrap()).expect("render");
    let caps: serde_json::Value =
        serde_json::from_str(&files.iter().find(|(n, _)| *n == export::CAPABILITIES_JSON).unwrap().1).unwrap();
    let list = caps["capabilities"].as_array().unwrap();
    let ids: Vec<&str> = list.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "notice.show",
            "progress.show",
            "interaction.choose",
            "interaction.text",
            "animation.celebrate",
            "vendor.com.example.desk.tail_swish"
        ]
    );
    let chars = |id: &str| list.iter().find(|c| c["id"] == id).unwrap()["characters"].clone();
    assert_eq!(chars("animation.celebrate"), serde_json::json!(["robot"]));
    assert_eq!(chars("vendor.com.example.desk.tail_swish"), serde_json::json!(["cat"]));
}
