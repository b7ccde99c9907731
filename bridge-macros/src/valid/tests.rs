//! The parameter rules of both surfaces, pinned message by message and in the order an author
//! reads them (the trybuild cases pin one mistake each, with its span; these pin every rule of
//! the shared rule set in both surfaces' words, several mistakes per method).

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

/// The messages of the `compile_error!`s in `tokens`, in order.
fn messages(tokens: TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tt) = iter.next() {
        match tt {
            TokenTree::Ident(ident) if ident == "compile_error" => {
                let _bang = iter.next();
                if let Some(TokenTree::Group(g)) = iter.next()
                    && let Ok(lit) = syn::parse2::<syn::LitStr>(g.stream())
                {
                    out.push(lit.value());
                }
            }
            TokenTree::Group(g) => out.extend(messages(g.stream())),
            _ => {}
        }
    }
    out
}

fn actions(input: TokenStream) -> Vec<String> {
    messages(crate::expand::bridge_actions(TokenStream::new(), input))
}

fn companion(input: TokenStream) -> Vec<String> {
    messages(crate::expand::bridge_actions(quote!(companion), input))
}

/// The same parameter mistakes, made by an action and by a capability.
fn mistakes() -> TokenStream {
    quote! {
        (d, e): (u32, u32),
        f: &str,
        g: impl Clone,
        #[bridge(args)] h: u32,
        #[bridge(args)] i: Opts,
        j: u32,
        #[serde(rename = "j")] k: u32,
    }
}

#[test]
fn action_parameter_rules() {
    let mistakes = mistakes();
    let errors = actions(quote! {
        impl App {
            /// Every mistake at once.
            #[bridge_action]
            async unsafe fn go<T>(
                &mut self,
                a: &mut ActionContext,
                b: &mut ActionContext,
                c: ActionContext,
                expected_version: i64,
                #mistakes
            ) {}
        }
    });
    assert_eq!(
        errors,
        [
            "`async fn` is not supported for actions: actions run on the UI thread and must return once the change \
             has taken effect (GB-5.4-1)",
            "an `unsafe fn` cannot be an action",
            "an action cannot be generic: each parameter needs one fixed JSON Schema",
            "an action takes at most one `&mut ActionContext` parameter",
            "the action context is passed by mutable reference: write `cx: &mut ActionContext` (it is not a JSON \
             parameter)",
            "parameter `expected_version` is reserved for optimistic concurrency (GB-5.5): the runtime checks \
             `expectedVersion` before the action runs; rename the parameter",
            "with #[bridge(args)] on `h`, its struct is the whole argument object: move `expected_version` into \
             that struct",
            "action parameters must be plain names like `recipient: String`: the name is the JSON property",
            "action parameters are deserialized from JSON and must be owned types (`String`, not `&str`)",
            "with #[bridge(args)] on `h`, its struct is the whole argument object: move `f` into that struct",
            "action parameters cannot be `impl Trait`: name a type",
            "with #[bridge(args)] on `h`, its struct is the whole argument object: move `g` into that struct",
            "`u32` cannot be the whole argument object (MCP inputSchema root is type: object): take it as one named \
             parameter instead, `h: u32` without #[bridge(args)], or use a struct with #[derive(BridgeArgs)]",
            "only one parameter can be #[bridge(args)]",
            "with #[bridge(args)] on `h`, its struct is the whole argument object: move `j` into that struct",
            "with #[bridge(args)] on `h`, its struct is the whole argument object: move `j` into that struct",
            "duplicate parameter name `j`: parameter `j` already has it (each parameter is one JSON property)",
        ]
    );
    assert_eq!(
        actions(quote! {
            impl App {
                /// No receiver.
                #[bridge_action]
                fn none() {}
                /// By value.
                #[bridge_action]
                fn owned(self) {}
            }
        }),
        [
            "an action must be a method taking `&mut self` or `&self` (its window or app)",
            "an action must take `&mut self` or `&self`"
        ]
    );
}

#[test]
fn capability_parameter_rules() {
    let mistakes = mistakes();
    let errors = companion(quote! {
        impl Desk {
            /// Every mistake at once.
            #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice")]
            async unsafe fn show<T>(
                &self,
                a: &mut ActionContext,
                #mistakes
            ) {}
        }
    });
    assert_eq!(
        errors,
        [
            "a capability method takes no `self`: it declares the capability, and its body is the semantic check of \
             the request params (CP-2-25), which runs without any instance",
            "a capability's params check cannot be `async`",
            "an `unsafe fn` cannot declare a capability",
            "a capability method cannot be generic: each parameter needs one fixed JSON Schema",
            "`ActionContext` belongs to GUI actions; a capability's params check takes only its parameters",
            "capability parameters must be plain names like `text: String`: the name is the JSON property",
            "capability parameters are deserialized from JSON and must be owned types (`String`, not `&str`)",
            "with #[bridge(args)] on `h`, its struct is the whole params object: move `f` into that struct",
            "capability parameters cannot be `impl Trait`: name a type",
            "with #[bridge(args)] on `h`, its struct is the whole params object: move `g` into that struct",
            "`u32` cannot be the whole params object (the capability's inputSchema is type: object): take it as one \
             named parameter instead, `h: u32` without #[bridge(args)], or use a struct with #[derive(BridgeArgs)]",
            "only one parameter can be #[bridge(args)]",
            "with #[bridge(args)] on `h`, its struct is the whole params object: move `j` into that struct",
            "with #[bridge(args)] on `h`, its struct is the whole params object: move `j` into that struct",
            "duplicate parameter name `j`: parameter `j` already has it (each parameter is one JSON property)",
        ]
    );
    // A capability whose attribute is already reported still has its method checked, in the same words.
    assert_eq!(
        companion(quote! {
            impl Desk {
                /// Bad key, borrowed parameter.
                #[bridge_action(id = "notice.show", version = "0.1.0", kind = "notice", colour = "red")]
                fn show(text: &str) {}
            }
        })
        .last()
        .map(String::as_str),
        Some("capability parameters are deserialized from JSON and must be owned types (`String`, not `&str`)")
    );
}
