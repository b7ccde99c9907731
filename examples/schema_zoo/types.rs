//! Ordinary app-author types, written the way serde users write them, with nothing
//! bridge-specific: each one is a shape of JSON Schema that real MCP clients have tripped over.

use bridge_runtime::prelude::*;
use std::collections::HashMap;
use uuid::Uuid;

// ---------------------------------------------------------------------------------------------
// A struct with camelCase names, a flattened struct, optional, defaulted and skipped fields.

/// A user profile.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// Stable id of the user.
    pub id: Uuid,
    /// The name shown in the title bar.
    pub display_name: String,
    /// How to reach the user, flattened into the profile itself.
    #[serde(flatten)]
    pub contact: Contact,
    /// Preferred language (e.g. "de-CH"); absent = the system's. Written as `null` when unset.
    pub language: Option<String>,
    /// Free-form labels, e.g. `{"team": "infra"}`; omitted when empty.
    #[serde(default, skip_serializing_if = "HashMap::is_empty")]
    pub labels: HashMap<String, String>,
    /// Whether the user gets the newsletter; true unless said otherwise.
    #[serde(default = "yes")]
    pub newsletter: bool,
}

fn yes() -> bool {
    true
}

/// How to reach a user.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    /// E-mail address.
    pub email: String,
    /// Phone number; omitted when unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Unit enums: one whose variants are documented, one without any docs.

/// How urgent something is.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// This week.
    Normal,
    /// Drop everything else.
    Urgent,
}

// Deliberately without doc comments, on the type and on its variants.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Color {
    Red,
    Green,
    Blue,
}

/// What `tag` made of a priority and a colour.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Tag {
    /// The priority.
    pub priority: Priority,
    /// The colour, `null` when none was given.
    pub color: Option<Color>,
    /// `priority` or `priority/color`.
    pub label: String,
}

// ---------------------------------------------------------------------------------------------
// Data-carrying enums in serde's three representations.

/// A shape, externally tagged: `{"circle": {"radius": 1}}`, or just `"point"`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// A circle around the origin.
    Circle {
        /// Radius, > 0.
        radius: f64,
    },
    /// An axis-aligned rectangle.
    Rectangle {
        /// Width, > 0.
        width: f64,
        /// Height, > 0.
        height: f64,
    },
    /// A point: no area at all.
    Point,
}

/// Area and perimeter of a shape.
#[derive(Serialize, JsonSchema, Debug)]
pub struct ShapeInfo {
    /// `circle`, `rectangle` or `point`.
    pub kind: String,
    /// Area.
    pub area: f64,
    /// Perimeter.
    pub perimeter: f64,
}

/// How a bill is paid, internally tagged: `{"method": "card", "last4": "4242"}`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum Payment {
    /// A payment card.
    Card {
        /// The card number's last four digits.
        last4: String,
        /// Name on the card, if given.
        holder: Option<String>,
    },
    /// Cash at the counter.
    Cash,
    /// A gift voucher.
    Voucher {
        /// The voucher code.
        code: String,
    },
}

/// What the till printed.
#[derive(Serialize, JsonSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Receipt {
    /// `card`, `cash` or `voucher`.
    pub method: String,
    /// What the receipt says, e.g. "card ending 4242".
    pub printed_as: String,
}

/// An amount of money as people type it, untagged: `1250` (cents), `"12.50"`, or
/// `{"units": 12, "cents": 50}`.
#[derive(Deserialize, JsonSchema, Debug)]
#[serde(untagged)]
pub enum Amount {
    /// Whole cents.
    Cents(i64),
    /// Decimal text, e.g. "12.50".
    Text(String),
    /// Units and cents.
    Parts {
        /// Whole units.
        units: i64,
        /// Cents, 0 to 99.
        cents: u8,
    },
}

/// An amount in cents and as display text.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Money {
    /// Whole cents.
    pub cents: i64,
    /// e.g. "$12.50".
    pub display: String,
}

// ---------------------------------------------------------------------------------------------
// Recursive and nested structs.

/// A node of an outline: a label and its child nodes.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
pub struct TreeNode {
    /// The node's label.
    pub label: String,
    /// Child nodes, in order.
    #[serde(default)]
    pub children: Vec<TreeNode>,
}

impl TreeNode {
    /// Nodes in this subtree, itself included.
    pub fn count(&self) -> usize {
        1 + self.children.iter().map(TreeNode::count).sum::<usize>()
    }

    /// Levels in this subtree (a leaf is 1).
    pub fn depth(&self) -> usize {
        1 + self.children.iter().map(TreeNode::depth).max().unwrap_or(0)
    }

    /// Labels of the leaves, left to right.
    pub fn leaves(&self, out: &mut Vec<String>) {
        if self.children.is_empty() {
            out.push(self.label.clone());
        }
        self.children.iter().for_each(|c| c.leaves(out));
    }

    /// Whether some node has an empty label.
    pub fn has_blank_label(&self) -> bool {
        self.label.trim().is_empty() || self.children.iter().any(TreeNode::has_blank_label)
    }

    /// The same tree with every node's children in reverse order.
    pub fn mirrored(&self) -> TreeNode {
        TreeNode { label: self.label.clone(), children: self.children.iter().rev().map(TreeNode::mirrored).collect() }
    }

    /// The same tree with every node's children sorted by label.
    pub fn sorted(&self) -> TreeNode {
        let mut children: Vec<TreeNode> = self.children.iter().map(TreeNode::sorted).collect();
        children.sort_by(|a, b| a.label.cmp(&b.label));
        TreeNode { label: self.label.clone(), children }
    }
}

/// Several trees.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug)]
pub struct Forest {
    /// The trees, in order.
    pub trees: Vec<TreeNode>,
}

/// Counts over a forest.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Census {
    /// Number of trees.
    pub trees: usize,
    /// Number of nodes in all trees.
    pub nodes: usize,
    /// Levels of the deepest tree.
    pub depth: usize,
    /// Leaf labels, tree by tree, left to right.
    pub leaves: Vec<String>,
}

// ---------------------------------------------------------------------------------------------
// Numbers, maps, a tuple struct, arbitrary JSON.

/// A page of numbers.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Page {
    /// Index of the first item returned.
    pub offset: usize,
    /// How many items there are in all.
    pub total: u64,
    /// The items of this page.
    pub items: Vec<i64>,
    /// The page's sum times the scale.
    pub scaled_sum: f32,
    /// The page's mean: NaN for an empty page, which JSON writes as `null`.
    pub mean: f64,
}

/// What to order so every item reaches the minimum.
#[derive(Serialize, JsonSchema, Debug)]
#[serde(rename_all = "camelCase")]
pub struct Restock {
    /// Units to order per item below the minimum.
    pub order: HashMap<String, u32>,
    /// Units to order in all.
    pub total_units: u64,
}

/// An RGB colour, as a JSON array `[r, g, b]`.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// What `store_value` kept.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Stored {
    /// The key.
    pub key: String,
    /// The JSON type of the value: object, array, string, number, boolean or null.
    pub kind: String,
    /// The value, as given.
    pub value: serde_json::Value,
    /// The value the key held before; `null` when it was new.
    pub previous: Option<serde_json::Value>,
}
