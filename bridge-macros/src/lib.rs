//! Attribute macros for bridge (placeholder; being written).
use proc_macro::TokenStream;
#[proc_macro_attribute]
pub fn bridge_window(_a: TokenStream, i: TokenStream) -> TokenStream { i }
#[proc_macro_attribute]
pub fn bridge_actions(_a: TokenStream, i: TokenStream) -> TokenStream { i }
#[proc_macro_attribute]
pub fn bridge_action(_a: TokenStream, i: TokenStream) -> TokenStream { i }
#[proc_macro_derive(BridgeFields, attributes(bridge))]
pub fn derive_fields(_i: TokenStream) -> TokenStream { TokenStream::new() }
#[proc_macro_derive(BridgeRow, attributes(bridge))]
pub fn derive_row(_i: TokenStream) -> TokenStream { TokenStream::new() }
