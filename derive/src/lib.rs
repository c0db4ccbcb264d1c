//! `#[derive(Module)]`: a model struct lists its tensors for `state_dict`, `get_parameters` and
//! `load_state_dict` by visiting each field under its name (`conv1.weight`, `layers.0.bias`).
//! Fields marked `#[module(skip)]` are left out; `#[module(name = "self")]` visits a field under
//! another name (for checkpoint keys that are Rust keywords or not snake case, such as BERT's
//! `attention.self` and `LayerNorm`).

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Fields, Index};

#[proc_macro_derive(Module, attributes(module))]
pub fn derive_module(input: TokenStream) -> TokenStream {
    let ast = parse_macro_input!(input as DeriveInput);
    let name = &ast.ident;
    let (impl_generics, ty_generics, where_clause) = ast.generics.split_for_impl();
    let Data::Struct(data) = &ast.data else {
        return syn::Error::new_spanned(&ast.ident, "#[derive(Module)] works on structs").to_compile_error().into();
    };
    let skip = |attrs: &[syn::Attribute]| {
        attrs
            .iter()
            .any(|a| a.path().is_ident("module") && a.parse_args::<syn::Ident>().map(|i| i == "skip").unwrap_or(false))
    };
    let renamed = |attrs: &[syn::Attribute]| -> syn::Result<Option<String>> {
        let mut name = None;
        for a in attrs.iter().filter(|a| a.path().is_ident("module")) {
            if let Ok(nv) = a.parse_args::<syn::MetaNameValue>() {
                if !nv.path.is_ident("name") {
                    return Err(syn::Error::new_spanned(
                        &nv.path,
                        "expected #[module(name = \"...\")] or #[module(skip)]",
                    ));
                }
                match &nv.value {
                    syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => name = Some(s.value()),
                    other => {
                        return Err(syn::Error::new_spanned(other, "#[module(name = ...)] takes a string literal"))
                    }
                }
            }
        }
        Ok(name)
    };
    let mut errors = Vec::new();
    let visits: Vec<proc_macro2::TokenStream> = match &data.fields {
        Fields::Named(f) => f
            .named
            .iter()
            .filter(|f| !skip(&f.attrs))
            .map(|f| {
                let id = f.ident.as_ref().expect("named field");
                let key = match renamed(&f.attrs) {
                    Ok(name) => name.unwrap_or_else(|| id.to_string()),
                    Err(e) => {
                        errors.push(e.to_compile_error());
                        id.to_string()
                    }
                };
                quote! { ::ferrograd::nn::Module::visit(&self.#id, &::ferrograd::nn::join_name(prefix, #key), f); }
            })
            .collect(),
        Fields::Unnamed(f) => f
            .unnamed
            .iter()
            .enumerate()
            .filter(|(_, f)| !skip(&f.attrs))
            .map(|(i, _)| {
                let idx = Index::from(i);
                let key = i.to_string();
                quote! { ::ferrograd::nn::Module::visit(&self.#idx, &::ferrograd::nn::join_name(prefix, #key), f); }
            })
            .collect(),
        Fields::Unit => Vec::new(),
    };
    if !errors.is_empty() {
        return quote! { #(#errors)* }.into();
    }
    quote! {
        impl #impl_generics ::ferrograd::nn::Module for #name #ty_generics #where_clause {
            fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &::ferrograd::Tensor)) {
                #(#visits)*
            }
        }
    }
    .into()
}
