//! The "Schema zoo" window: one action per kind of type, each doing something a test can check
//! and each with a way to fail.

use crate::types::*;
use bridge_runtime::prelude::*;
use serde_json::Value;
use std::collections::HashMap;

/// Window "Schema zoo".
#[bridge_window(title = "Schema zoo", summary = summary)]
#[derive(Default)]
pub struct Zoo {
    /// The last thing an action did.
    #[bridge(text, id = "last", label = "Last call")]
    pub last: String,
    #[bridge(skip)]
    pub profile: Option<Profile>,
    #[bridge(skip)]
    pub values: HashMap<String, Value>,
}

impl Zoo {
    fn summary(&self) -> String {
        let who = self.profile.as_ref().map_or("nobody", |p| p.display_name.as_str());
        format!("Schema zoo: profile of {who}, {} stored values", self.values.len())
    }
}

/// Deepest outline the tree actions accept.
pub const MAX_DEPTH: usize = 32;

fn check_tree(param: &str, tree: &TreeNode) -> Result<(), ActionError> {
    if tree.has_blank_label() {
        return Err(ActionError::field(param, "Every node needs a label"));
    }
    if tree.depth() > MAX_DEPTH {
        return Err(ActionError::field(param, format!("At most {MAX_DEPTH} levels")));
    }
    Ok(())
}

#[bridge_actions]
impl Zoo {
    /// Save a user profile; returns it as stored (name trimmed, e-mail lower-cased).
    #[bridge_action(idempotent)]
    pub fn save_profile(
        &mut self,
        /// The profile to save.
        profile: Profile,
    ) -> Result<Profile, ActionError> {
        let mut p = profile;
        p.display_name = p.display_name.trim().to_owned();
        if p.display_name.is_empty() {
            return Err(ActionError::field("profile", "displayName cannot be empty"));
        }
        p.contact.email = p.contact.email.trim().to_lowercase();
        if !p.contact.email.contains('@') {
            return Err(ActionError::field("profile", "email needs an @"));
        }
        self.last = format!("Saved the profile of {}", p.display_name);
        self.profile = Some(p.clone());
        Ok(p)
    }

    /// Keep any JSON value under a key; returns it with its JSON type and the value it replaced.
    // `value` has no doc comment on purpose: an undocumented `serde_json::Value` is the schema
    // that accepts everything, which must still reach clients as an object schema (`{}`).
    #[bridge_action(idempotent)]
    pub fn store_value(
        &mut self,
        /// Where to keep it.
        key: String,
        value: Value,
    ) -> Result<Stored, ActionError> {
        if key.trim().is_empty() {
            return Err(ActionError::field("key", "Cannot be empty"));
        }
        let kind = match &value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let previous = self.values.insert(key.clone(), value.clone());
        self.last = format!("Stored {kind} under {key}");
        Ok(Stored { key, kind: kind.to_owned(), value, previous })
    }

    /// Combine a priority and an optional colour into a label.
    #[bridge_action(read_only, idempotent)]
    pub fn tag(
        &self,
        /// How urgent.
        priority: Priority,
        /// A colour, if any.
        color: Option<Color>,
    ) -> Tag {
        let label = match color {
            Some(c) => format!("{}/{}", wire_name(priority), wire_name(c)),
            None => wire_name(priority),
        };
        Tag { priority, color, label }
    }

    /// Area and perimeter of a shape.
    #[bridge_action(read_only, idempotent)]
    pub fn describe_shape(
        &self,
        /// The shape.
        shape: Shape,
    ) -> Result<ShapeInfo, ActionError> {
        let positive = |v: f64, what: &str| {
            if v > 0.0 && v.is_finite() {
                Ok(v)
            } else {
                Err(ActionError::field("shape", format!("{what} must be > 0")))
            }
        };
        Ok(match shape {
            Shape::Circle { radius } => {
                let r = positive(radius, "radius")?;
                ShapeInfo {
                    kind: "circle".into(),
                    area: std::f64::consts::PI * r * r,
                    perimeter: 2.0 * std::f64::consts::PI * r,
                }
            }
            Shape::Rectangle { width, height } => {
                let (w, h) = (positive(width, "width")?, positive(height, "height")?);
                ShapeInfo { kind: "rectangle".into(), area: w * h, perimeter: 2.0 * (w + h) }
            }
            Shape::Point => ShapeInfo { kind: "point".into(), area: 0.0, perimeter: 0.0 },
        })
    }

    /// Take a payment; returns what the receipt says.
    #[bridge_action(read_only)]
    pub fn pay(
        &self,
        /// How the bill is paid.
        payment: Payment,
    ) -> Result<Receipt, ActionError> {
        Ok(match payment {
            Payment::Card { last4, holder } => {
                if last4.len() != 4 || !last4.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(ActionError::field("payment", "last4 must be four digits"));
                }
                let by = holder.map(|h| format!(" ({h})")).unwrap_or_default();
                Receipt { method: "card".into(), printed_as: format!("card ending {last4}{by}") }
            }
            Payment::Cash => Receipt { method: "cash".into(), printed_as: "cash".into() },
            Payment::Voucher { code } => {
                if code.trim().is_empty() {
                    return Err(ActionError::field("payment", "code cannot be empty"));
                }
                Receipt { method: "voucher".into(), printed_as: format!("voucher {code}") }
            }
        })
    }

    /// Read an amount however it was typed; returns it in cents.
    #[bridge_action(read_only, idempotent)]
    pub fn parse_amount(
        &self,
        /// Cents, decimal text, or units and cents.
        amount: Amount,
    ) -> Result<Money, ActionError> {
        let cents = match amount {
            Amount::Cents(c) => c,
            Amount::Text(t) => {
                parse_cents(&t).ok_or_else(|| ActionError::field("amount", "Not an amount like 12.50"))?
            }
            Amount::Parts { units, cents } if cents < 100 => {
                units.checked_mul(100).and_then(|u| u.checked_add(cents.into())).ok_or_else(too_large)?
            }
            Amount::Parts { .. } => return Err(ActionError::field("amount", "cents must be below 100")),
        };
        let sign = if cents < 0 { "-" } else { "" };
        let abs = cents.unsigned_abs();
        Ok(Money { cents, display: format!("{sign}${}.{:02}", abs / 100, abs % 100) })
    }

    /// The same outline with every node's children in reverse order.
    #[bridge_action(read_only, idempotent)]
    pub fn mirror_tree(
        &self,
        /// The outline.
        tree: TreeNode,
    ) -> Result<TreeNode, ActionError> {
        check_tree("tree", &tree)?;
        Ok(tree.mirrored())
    }

    /// Cut the root off an outline: its children become the trees of a forest.
    #[bridge_action(read_only, idempotent)]
    pub fn split_tree(
        &self,
        /// The outline.
        tree: TreeNode,
    ) -> Result<Forest, ActionError> {
        check_tree("tree", &tree)?;
        if tree.children.is_empty() {
            return Err(ActionError::field("tree", "The root has no children to split off"));
        }
        Ok(Forest { trees: tree.children })
    }

    /// Count the trees, nodes, levels and leaves of a forest.
    #[bridge_action(read_only, idempotent)]
    pub fn count_nodes(
        &self,
        /// The forest.
        forest: Forest,
    ) -> Result<Census, ActionError> {
        if forest.trees.is_empty() {
            return Err(ActionError::field("forest", "No trees"));
        }
        let mut leaves = Vec::new();
        for t in &forest.trees {
            check_tree("forest", t)?;
            t.leaves(&mut leaves);
        }
        Ok(Census {
            trees: forest.trees.len(),
            nodes: forest.trees.iter().map(TreeNode::count).sum(),
            depth: forest.trees.iter().map(TreeNode::depth).max().unwrap_or(0),
            leaves,
        })
    }

    /// One page of a list of numbers, and the page's sum times `scale`.
    #[bridge_action(read_only, idempotent)]
    pub fn page(
        &self,
        /// The whole list.
        items: Vec<i64>,
        /// Index of the first item to return.
        offset: usize,
        /// Page size, at least 1.
        limit: u64,
        /// Factor applied to the page's sum.
        scale: f32,
    ) -> Result<Page, ActionError> {
        if limit == 0 {
            return Err(ActionError::field("limit", "Must be at least 1"));
        }
        if offset > items.len() {
            return Err(ActionError::field("offset", format!("The list has {} items", items.len())));
        }
        let end = offset.saturating_add(usize::try_from(limit).unwrap_or(usize::MAX)).min(items.len());
        let page = items[offset..end].to_vec();
        let sum: i64 = page.iter().sum();
        let mean = sum as f64 / page.len() as f64;
        Ok(Page { offset, total: items.len() as u64, items: page, scaled_sum: sum as f32 * scale, mean })
    }

    /// What to order so that every item in stock reaches `minimum` units.
    #[bridge_action(read_only, idempotent)]
    pub fn restock(
        &self,
        /// Units in stock per item name.
        stock: HashMap<String, u32>,
        /// The least every item should have.
        minimum: u32,
    ) -> Result<Restock, ActionError> {
        if stock.keys().any(|k| k.trim().is_empty()) {
            return Err(ActionError::field("stock", "Item names cannot be empty"));
        }
        let order: HashMap<String, u32> =
            stock.into_iter().filter(|(_, n)| *n < minimum).map(|(k, n)| (k, minimum - n)).collect();
        let total_units = order.values().map(|n| u64::from(*n)).sum();
        Ok(Restock { order, total_units })
    }

    /// Mix two colours half and half.
    #[bridge_action(read_only, idempotent)]
    pub fn mix(
        &self,
        /// One colour.
        a: Rgb,
        /// The other.
        b: Rgb,
    ) -> Rgb {
        let half = |x: u8, y: u8| ((u16::from(x) + u16::from(y)) / 2) as u8;
        Rgb(half(a.0, b.0), half(a.1, b.1), half(a.2, b.2))
    }
}

/// How a unit variant is written on the wire (`Priority::Urgent` → `"urgent"`).
fn wire_name(v: impl Serialize) -> String {
    serde_json::to_value(v).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn too_large() -> ActionError {
    ActionError::field("amount", "Too large")
}

/// `"12.5"`, `"12.50"`, `"-3"` → cents; anything else → `None`.
fn parse_cents(text: &str) -> Option<i64> {
    let t = text.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let (units, frac) = t.split_once('.').unwrap_or((t, ""));
    if units.is_empty() || !units.bytes().all(|b| b.is_ascii_digit()) || frac.len() > 2 {
        return None;
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let cents: i64 = format!("{frac:0<2}").parse().ok()?;
    let value = units.parse::<i64>().ok()?.checked_mul(100)?.checked_add(cents)?;
    Some(if neg { -value } else { value })
}
