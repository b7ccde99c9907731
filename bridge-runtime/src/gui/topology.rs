//! Topology: which windows are operable, from each window's `modal` and `ownerId` (GB §2,
//! GB-10.2).

use std::collections::{HashMap, HashSet};

/// The operable set over `(id, modal, ownerId)` triples in opening order (GB-2-5, GB-2-6,
/// GB-10.2-2, OQ-GB-1, OQ-GB-3, OQ-GB-4), in O(windows). Public so that tests can compare it with
/// a model.
pub(crate) fn operable_set<'a>(windows: impl Iterator<Item = (&'a str, bool, Option<&'a str>)> + Clone) -> Vec<String> {
    let all: Vec<(&str, bool, Option<&str>)> = windows.collect();
    let ids: HashSet<&str> = all.iter().map(|w| w.0).collect();
    // Window-level modals whose owner is gone count as roots, never as dangling children.
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for w in &all {
        if let (true, Some(owner)) = (w.1, w.2)
            && ids.contains(owner)
        {
            children.entry(owner).or_default().push(w.0);
        }
    }
    // A tree's tops are its leaves, in opening order (depth first); `seen` guards against
    // ownership cycles in hand-made input.
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let mut tops = |root: &'a str, out: &mut Vec<String>| {
        let mut stack = vec![root];
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            match children.get(id) {
                Some(kids) => stack.extend(kids.iter().rev().copied()),
                None => out.push(id.to_owned()),
            }
        }
    };
    if let Some(app_modal) = all.iter().rev().find(|w| w.1 && w.2.is_none()) {
        tops(app_modal.0, &mut out);
        return out;
    }
    for w in &all {
        let is_root = match (w.1, w.2) {
            (_, None) => true,
            (false, Some(_)) => true, // OQ-GB-2: treat as top-level
            (true, Some(owner)) => !ids.contains(owner),
        };
        if is_root {
            tops(w.0, &mut out);
        }
    }
    out
}
