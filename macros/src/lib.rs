//! `variant!`: a q6_K MMQ kernel variant written as `field: value` pairs and checked while the crate builds.
//!
//! Why a proc-macro: a bad description should stop the build with one sentence under the field at fault,
//! not fail at run time. This crate only reads the syntax. Every rule and every sentence about the fields
//! comes from `mmqgen_codegen::fields::from_fields` and `mmqgen_codegen::validate::validate`, the code the
//! TOML loader and the runtime call, so a description is judged the same wherever it is written. The only
//! sentences written here are about the syntax itself (a missing `:`, an expression where a value belongs).
//!
//! On success the macro expands to a `VariantDescription` struct literal with every field explicit (defaults
//! filled in), so `const R56: VariantDescription = variant! { .. };` works and the expansion shows the whole
//! configuration.

use mmqgen_codegen::fields::{
    field, from_fields, written_text, FieldError, FieldKind, FieldValue, RustLiteral, FIELDS,
    FIELD_TABLE,
};
use mmqgen_codegen::sweep::{expand_sweep, Expansion, SweepError};
use mmqgen_codegen::validate::validate;
use mmqgen_codegen::VariantDescription;
use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Lit, Token};

/// Declares a q6_K MMQ variant; see the crate docs. Omitted fields take
/// `VariantDescription::DEFAULTS`; `name` is required.
///
/// ```ignore
/// pub const R56: mmqgen::VariantDescription = mmqgen::variant! {
///     name: "r56", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64,
///     warps_m: 2, warps_n: 2, scale_fetch: plane, expand: uint4,
///     cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
/// };
/// ```
#[proc_macro]
pub fn variant(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand(input.into(), &codegen_path()).into()
}

/// Declares a sweep: `variant!`'s fields, any of which may be a `[a, b, ...]` list, expanded at compile time
/// to the cartesian product of the lists. `name` (required, never a list) prefixes every point's declared name,
/// followed by a tag and value per varying field (`rf_t128_s3`). `archs: [sm_80, sm_90]` is one set of
/// architectures, as in `variant!`; a list of lists (`archs: [[sm_80], [sm_90]]`) sweeps over sets.
///
/// Expands to a `mmqgen_codegen::sweep::StaticSweep` (usable in a `const`): the valid points as
/// `VariantDescription`s, the points the validator refused with their sentences, and the points dropped
/// because they render like an earlier one. Refused points never stop the build; it fails only for a
/// problem with the sweep itself (syntax, no name, an unknown or repeated field, an empty list, more than
/// 10,000 points) or when *every* point is refused (the error quotes the first point's sentence).
///
/// ```ignore
/// pub const RF: mmqgen::codegen::StaticSweep = mmqgen::sweep! {
///     name: "rf", engine: mma_k32_regfold, mode: int_per32, kdr: 8, scale_fetch: narrow, expand: uint4,
///     cp_async_activations: 16, archs: [sm_90], stages: [2, 3], tile_n: [64, 128],
/// };
/// ```
#[proc_macro]
pub fn sweep(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand_sweep_macro(input.into(), &codegen_path()).into()
}

fn expand_sweep_macro(input: TokenStream, root: &TokenStream) -> TokenStream {
    match sweep_points(input) {
        Ok(expansion) => sweep_literal(root, &expansion),
        Err(error) => {
            let errors = error.to_compile_error();
            quote! { { #errors #root::sweep::StaticSweep::EMPTY } }
        }
    }
}

fn sweep_points(input: TokenStream) -> syn::Result<Expansion> {
    let fields = parse_fields.parse2(input.clone())?;
    let pairs = fields.iter().map(|f| (f.name.as_str(), &f.value));
    let expansion = expand_sweep(pairs).map_err(|error| {
        let message = error.to_string();
        let field_named = |name: &str, on_value: bool| {
            fields
                .iter()
                .filter(|f| f.name == name)
                .nth(usize::from(matches!(error, SweepError::Repeated(_))))
                .map(|f| {
                    if on_value {
                        syn::Error::new_spanned(&f.value_tokens, &message)
                    } else {
                        syn::Error::new(f.name_span, &message)
                    }
                })
        };
        let placed = match &error {
            SweepError::UnknownField(name) | SweepError::Repeated(name) => field_named(name, false),
            SweepError::EmptyList(name) | SweepError::RepeatedValue { field: name, .. } => {
                field_named(name, true)
            }
            SweepError::BadName(_) | SweepError::NameChars(_) => field_named("name", true),
            SweepError::NoName | SweepError::TooLarge { .. } | SweepError::OverTotal { .. } => None,
        };
        placed.unwrap_or_else(|| whole(&input, &message))
    })?;
    if expansion.points.is_empty() {
        let first = expansion
            .refused
            .first()
            .map(|r| format!("; the first, {}, is refused because {}", r.name, r.sentence))
            .unwrap_or_default();
        return Err(whole(
            &input,
            &format!(
                "every one of the {} point(s) of sweep `{}` is refused by the validator, so it declares nothing{first}",
                expansion.total, expansion.name
            ),
        ));
    }
    Ok(expansion)
}

/// An error under everything the user wrote (the call site when nothing was written).
fn whole(input: &TokenStream, message: &str) -> syn::Error {
    if input.is_empty() {
        syn::Error::new(Span::call_site(), message)
    } else {
        syn::Error::new_spanned(input, message)
    }
}

/// The `StaticSweep` literal, inside a block with a `const` so that it is a constant in any context.
fn sweep_literal(root: &TokenStream, expansion: &Expansion) -> TokenStream {
    let name = &expansion.name;
    let total = expansion.total;
    let points = expansion
        .points
        .iter()
        .map(|p| description_literal(root, &p.desc));
    let refused = expansion.refused.iter().map(|r| {
        let (name, sentence) = (&r.name, &r.sentence);
        quote! { #root::sweep::StaticRefused { name: #name, sentence: #sentence } }
    });
    let duplicates = expansion.duplicates.iter().map(|d| {
        let (name, same_as) = (&d.name, &d.same_as);
        quote! { (#name, #same_as) }
    });
    quote! {
        {
            const SWEEP: #root::sweep::StaticSweep = #root::sweep::StaticSweep {
                name: #name,
                total: #total,
                points: &[#(#points),*],
                refused: &[#(#refused),*],
                duplicates: &[#(#duplicates),*],
            };
            SWEEP
        }
    }
}

/// The whole macro, on `proc_macro2` tokens so that unit tests can run it.
fn expand(input: TokenStream, root: &TokenStream) -> TokenStream {
    match describe(input) {
        Ok(desc) => description_literal(root, &desc),
        Err(error) => {
            let errors = error.to_compile_error();
            // A value of the right type after the errors, so that they are the only diagnostics.
            quote! { { #errors #root::VariantDescription::DEFAULTS } }
        }
    }
}

/// One `field: value` pair as written.
struct Field {
    name: String,
    name_span: Span,
    value: FieldValue,
    /// The value's tokens, for a diagnostic that underlines the whole value.
    value_tokens: TokenStream,
}

fn describe(input: TokenStream) -> syn::Result<VariantDescription> {
    let fields = parse_fields.parse2(input.clone())?;
    let pairs = fields.iter().map(|f| (f.name.as_str(), &f.value));
    let desc = from_fields(pairs).map_err(|errors| spanned(&input, &fields, errors))?;
    validate(&desc).map_err(|errors| spanned(&input, &fields, errors))?;
    Ok(desc)
}

// ---------------------------------------------------------------------------------------------------------
// Syntax. Recovers at the next top-level comma so that every syntax error is reported at once.

fn parse_fields(input: ParseStream) -> syn::Result<Vec<Field>> {
    let mut fields = Vec::new();
    let mut errors: Option<syn::Error> = None;
    let mut push = |e: syn::Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    while !input.is_empty() {
        let field = match parse_field(input) {
            Ok(field) => field,
            Err(e) => {
                push(e);
                rest_of_value(input)?;
                eat_comma(input)?;
                continue;
            }
        };
        let separated = input.is_empty() || eat_comma(input)?;
        if separated {
            // `field: value` followed by `,` or the end: well formed.
        } else if input.peek(Ident::peek_any) && input.peek2(Token![:]) {
            push(syn::Error::new(
                input.span(),
                "expected `,` between fields, as in `kdr: 2, nbj: 64`",
            ));
        } else {
            let mut tokens = field.value_tokens.clone();
            tokens.extend(rest_of_value(input)?);
            push(not_a_value(&field.name, &tokens));
            eat_comma(input)?;
        }
        fields.push(field);
    }
    match errors {
        Some(errors) => Err(errors),
        None => Ok(fields),
    }
}

fn parse_field(input: ParseStream) -> syn::Result<Field> {
    if !input.peek(Ident::peek_any) {
        return Err(input.error("expected `field: value`, as in `kdr: 2`"));
    }
    let ident = Ident::parse_any(input)?;
    let name = ident.unraw().to_string();
    if !input.peek(Token![:]) || input.peek(Token![::]) {
        let span = if input.is_empty() {
            ident.span()
        } else {
            input.span()
        };
        return Err(syn::Error::new(
            span,
            format!(
                "expected `:` after `{name}`: write `field: value`, as in `{}`",
                example(&name)
            ),
        ));
    }
    let colon: Token![:] = input.parse()?;
    if input.is_empty() || input.peek(Token![,]) {
        let span = if input.is_empty() {
            colon.span
        } else {
            input.span()
        };
        return Err(syn::Error::new(
            span,
            format!(
                "`{name}` has no value: write it, as in `{}`",
                example(&name)
            ),
        ));
    }
    let (value, value_tokens) = parse_value(input, &name)?;
    Ok(Field {
        name,
        name_span: ident.span(),
        value,
        value_tokens,
    })
}

/// One value: a string, an integer (optionally negative, so that the validator can say why it is wrong),
/// `true`/`false`, a bare word, or a bracketed list of values.
fn parse_value(input: ParseStream, field: &str) -> syn::Result<(FieldValue, TokenStream)> {
    let first: TokenTree = input.parse()?;
    let mut tokens = first.to_token_stream();
    let value = match &first {
        TokenTree::Ident(ident) => match ident.to_string().as_str() {
            "true" => FieldValue::Bool(true),
            "false" => FieldValue::Bool(false),
            _ => FieldValue::Word(ident.unraw().to_string()),
        },
        TokenTree::Literal(literal) => match Lit::new(literal.clone()) {
            Lit::Str(s) if s.suffix().is_empty() => FieldValue::Str(s.value()),
            Lit::Int(i) => FieldValue::Int(integer(&i, field, false)?),
            _ => {
                tokens.extend(rest_of_value(input)?);
                return Err(not_a_value(field, &tokens));
            }
        },
        TokenTree::Punct(p) if p.as_char() == '-' && input.peek(syn::LitInt) => {
            let i: syn::LitInt = input.parse()?;
            i.to_tokens(&mut tokens);
            FieldValue::Int(integer(&i, field, true)?)
        }
        TokenTree::Group(g) if g.delimiter() == Delimiter::Bracket => {
            let items = (|input: ParseStream| parse_list(input, field)).parse2(g.stream())?;
            FieldValue::List(items)
        }
        _ => {
            tokens.extend(rest_of_value(input)?);
            return Err(not_a_value(field, &tokens));
        }
    };
    Ok((value, tokens))
}

fn parse_list(input: ParseStream, field: &str) -> syn::Result<Vec<FieldValue>> {
    let mut items = Vec::new();
    while !input.is_empty() {
        let (item, mut tokens) = parse_value(input, field)?;
        items.push(item);
        if !input.is_empty() && !eat_comma(input)? {
            tokens.extend(rest_of_value(input)?);
            return Err(not_a_value(field, &tokens));
        }
    }
    Ok(items)
}

fn integer(lit: &syn::LitInt, field: &str, negative: bool) -> syn::Result<i64> {
    if !lit.suffix().is_empty() {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "write the integer without the `{}` suffix, as in `{}`",
                lit.suffix(),
                example(field)
            ),
        ));
    }
    let digits = if negative {
        format!("-{}", lit.base10_digits())
    } else {
        lit.base10_digits().to_string()
    };
    digits.parse::<i64>().map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("{digits} is too large for `{field}`, as for any field"),
        )
    })
}

/// Consumes tokens up to (not including) the next top-level comma.
fn rest_of_value(input: ParseStream) -> syn::Result<TokenStream> {
    let mut rest = TokenStream::new();
    while !input.is_empty() && !input.peek(Token![,]) {
        rest.extend([input.parse::<TokenTree>()?]);
    }
    Ok(rest)
}

fn eat_comma(input: ParseStream) -> syn::Result<bool> {
    Ok(input.parse::<Option<Token![,]>>()?.is_some())
}

fn not_a_value(field: &str, tokens: &TokenStream) -> syn::Error {
    syn::Error::new_spanned(
        tokens,
        format!(
            "`{field}` takes a value written out, as in `{}`: a string, an integer, true or false, a word \
             or a [list], not an expression",
            example(field)
        ),
    )
}

/// `field: value` with the field's default as the value, for the syntax sentences; `kdr: 2` for a field
/// that does not exist.
fn example(name: &str) -> String {
    match field(name) {
        // The default name is empty: show one.
        Some(field) if field.kind == FieldKind::Text => format!("{}: \"r56\"", field.name),
        Some(field) => format!(
            "{}: {}",
            field.name,
            written_text(&(field.written)(&VariantDescription::DEFAULTS))
        ),
        None => "kdr: 2".to_string(),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Meaning: codegen's sentences, placed at the tokens they are about.

/// Turns codegen's errors into one `syn::Error` holding all of them. A rule about a field points at its
/// value; an unknown field, and every repetition of a field, at the field's name; a rule about a field that
/// was not written (a missing `name`, a default that does not fit) at the whole input, which, unlike the
/// call site, underlines only what the user wrote and carries no "originates in the macro" note.
///
/// `from_fields` reports, per field, first what is wrong with its first occurrence, then one error per
/// repetition; `validate` runs only when there are no repetitions. The attribution relies on that order.
fn spanned(input: &TokenStream, fields: &[Field], errors: Vec<FieldError>) -> syn::Error {
    let mut seen_per_field: Vec<(&str, usize)> = Vec::new();
    let mut combined: Option<syn::Error> = None;
    for error in &errors {
        let occurrences: Vec<&Field> = fields.iter().filter(|f| f.name == error.field).collect();
        let total = errors.iter().filter(|e| e.field == error.field).count();
        let k = match seen_per_field.iter_mut().find(|(f, _)| *f == error.field) {
            Some((_, n)) => {
                *n += 1;
                *n - 1
            }
            None => {
                seen_per_field.push((&error.field, 1));
                0
            }
        };
        let message = error.message.as_str();
        let e = match occurrences.as_slice() {
            [] if input.is_empty() => syn::Error::new(Span::call_site(), message),
            [] => syn::Error::new_spanned(input, message),
            [first, ..] => {
                let repeats = occurrences.len() - 1;
                let about_first = total.saturating_sub(repeats);
                if k >= about_first {
                    let repeat = occurrences[(1 + k - about_first).min(repeats)];
                    syn::Error::new(repeat.name_span, message)
                } else if FIELDS.contains(&error.field.as_str()) {
                    syn::Error::new_spanned(&first.value_tokens, message)
                } else {
                    syn::Error::new(first.name_span, message)
                }
            }
        };
        match &mut combined {
            Some(all) => all.combine(e),
            None => combined = Some(e),
        }
    }
    combined.unwrap_or_else(|| syn::Error::new(Span::call_site(), "invalid variant description"))
}

// ---------------------------------------------------------------------------------------------------------
// Expansion.

/// How the calling crate reaches `mmqgen_codegen`: `crate` inside mmqgen-codegen, `crate::codegen` inside
/// mmqgen (whose library re-exports it as `codegen`), else the dependency's name, preferring a direct
/// mmqgen-codegen dependency over mmqgen: it names the types without a re-export, and it is the only one a
/// trybuild crate should have (docs/DESIGN.md D9).
fn codegen_path() -> TokenStream {
    use proc_macro_crate::{crate_name, FoundCrate};
    // proc-macro-crate answers `Itself` for every target of the package except integration tests; a binary
    // or an example of the package reaches the library by its name, as an outside crate does.
    let library = |lib: &str| {
        std::env::var_os("CARGO_BIN_NAME").is_none()
            && std::env::var("CARGO_CRATE_NAME").map_or(true, |c| c == lib)
    };
    let named = |name: &str| {
        let ident = Ident::new(name, Span::call_site());
        quote!(::#ident)
    };
    match (crate_name("mmqgen-codegen"), crate_name("mmqgen")) {
        (Ok(FoundCrate::Itself), _) if library("mmqgen_codegen") => quote!(crate),
        (Ok(FoundCrate::Itself), _) => quote!(::mmqgen_codegen),
        (_, Ok(FoundCrate::Itself)) if library("mmqgen") => quote!(crate::codegen),
        (_, Ok(FoundCrate::Itself)) => quote!(::mmqgen::codegen),
        (Ok(FoundCrate::Name(codegen)), _) => named(&codegen),
        (_, Ok(FoundCrate::Name(mmqgen))) => {
            let mmqgen = named(&mmqgen);
            quote!(#mmqgen::codegen)
        }
        // Not built by cargo, or neither is a dependency: the public path, whose failure names `mmqgen`.
        _ => quote!(::mmqgen::codegen),
    }
}

/// The struct literal, every field explicit, from codegen's field table: a field missing from the table is a
/// missing field of the literal, a compile error wherever `variant!` is used.
fn description_literal(root: &TokenStream, desc: &VariantDescription) -> TokenStream {
    let ident = |name: &str| Ident::new(name, Span::call_site());
    let fields = FIELD_TABLE.iter().map(|field| {
        let name = ident(field.name);
        let value = match (field.literal)(desc) {
            RustLiteral::Name(name) => quote!(::std::borrow::Cow::Borrowed(#name)),
            RustLiteral::U32(number) => quote!(#number),
            RustLiteral::Bool(flag) => quote!(#flag),
            RustLiteral::Enum { type_name, value } => {
                let (type_name, value) = (ident(type_name), ident(&value));
                quote!(#root::#type_name::#value)
            }
            RustLiteral::ArchBits(bits) => quote!(#root::ArchSet(#bits)),
        };
        quote!(#name: #value,)
    });
    quote! {
        #root::VariantDescription {
            #(#fields)*
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(input: TokenStream) -> String {
        expand(input, &quote!(::mmqgen::codegen)).to_string()
    }

    /// The expansion of the brief's example, printed with `--nocapture`.
    #[test]
    fn r56_expands_to_an_explicit_literal() {
        let out = expand_str(quote! {
            name: "r56", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64,
            warps_m: 2, warps_n: 2, scale_fetch: plane, expand: uint4,
            cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
        });
        println!("{out}");
        let expected = quote! {
            ::mmqgen::codegen::VariantDescription {
                name: ::std::borrow::Cow::Borrowed("r56"),
                engine: ::mmqgen::codegen::Engine::MmaK16,
                mode: ::mmqgen::codegen::NumericsMode::F32Per16,
                kdr: 2u32,
                nbj: 64u32,
                tile_n: 64u32,
                warps_m: 2u32,
                warps_n: 2u32,
                ksplit: 1u32,
                scale_fetch: ::mmqgen::codegen::ScaleFetch::Plane,
                expand: ::mmqgen::codegen::ExpandWidth::Uint4,
                cp_async_activations: ::mmqgen::codegen::CpAsync::B16,
                cp_async_plane: ::mmqgen::codegen::CpAsync::B16,
                stages: 2u32,
                accumulator_sets: 1u32,
                totals: ::mmqgen::codegen::Totals::Registers,
                segment: ::mmqgen::codegen::Segment::Registers,
                refill: ::mmqgen::codegen::Refill::Burst,
                quantizer: ::mmqgen::codegen::Quantizer::Separate,
                blocks_per_sm: 1u32,
                chunk_unroll: 0u32,
                token_unroll: 0u32,
                ring_lanes: ::mmqgen::codegen::RingLanes::Superblocks,
                warps_k: 1u32,
                cluster_rows: 1u32,
                cluster_tokens: 1u32,
                fold_warps: 0u32,
                producer: ::mmqgen::codegen::Producer::None,
                tail_parts: 1u32,
                archs: ::mmqgen::codegen::ArchSet(34u16),
                allow_spills: false,
            }
        };
        assert_eq!(out, expected.to_string());
    }

    #[test]
    fn every_example_is_its_field_written_as_the_macro_reads_it() {
        for name in FIELDS {
            let text = example(name);
            let tokens: TokenStream = text.parse().unwrap();
            let fields = parse_fields.parse2(tokens).unwrap();
            assert_eq!(fields.len(), 1, "{text}");
            let mut desc = VariantDescription::DEFAULTS;
            mmqgen_codegen::fields::set_field(&mut desc, name, &fields[0].value)
                .unwrap_or_else(|e| panic!("{text}: {e}"));
        }
    }

    #[test]
    fn a_sweep_expands_to_a_const_block_of_points() {
        let out = expand_sweep_macro(
            quote! { name: "rf", stages: [1, 2], cp_async_activations: [off, 16] },
            &quote!(::mmqgen::codegen),
        )
        .to_string();
        assert!(out.contains("const SWEEP"), "{out}");
        assert!(out.contains("total : 4usize"), "{out}");
        // stages 2 without cp.async is refused: listed, not an error.
        assert!(!out.contains("compile_error"), "{out}");
        assert!(out.contains("\"rf_cpaoff_s2\""), "{out}");
        assert_eq!(out.matches("VariantDescription {").count(), 3, "{out}");
    }

    #[test]
    fn sweep_errors_are_compile_errors() {
        for (input, want) in [
            (quote! { stages: [1, 2] }, "a sweep needs a name"),
            (quote! { name: "s", stages: [] }, "empty list"),
            (
                quote! { name: "s", kdr: [3, 5] },
                "every one of the 2 point(s)",
            ),
            (quote! { name: "s", kdr: [2], kdr: [4] }, "given twice"),
        ] {
            let out = expand_sweep_macro(input, &quote!(::m)).to_string();
            assert!(out.contains("compile_error"), "{out}");
            assert!(out.contains(want), "{want}: {out}");
            assert!(
                out.ends_with(":: m :: sweep :: StaticSweep :: EMPTY }"),
                "{out}"
            );
        }
    }

    #[test]
    fn errors_keep_the_value_typed() {
        let out = expand_str(quote! { name: "r", kdr: 3 });
        assert!(out.contains("compile_error"), "{out}");
        assert!(out.contains("kdr must divide 8"), "{out}");
        assert!(
            out.ends_with(":: mmqgen :: codegen :: VariantDescription :: DEFAULTS }"),
            "{out}"
        );
    }

    #[test]
    fn every_error_is_reported() {
        let out = expand_str(quote! { name: "r", engine: dp4b, kdr: x, kdr: 2, wat: 1 });
        assert_eq!(out.matches("compile_error").count(), 4, "{out}");
    }

    #[test]
    fn negative_and_nested_values_reach_the_field_parser() {
        let fields = parse_fields
            .parse2(quote! { kdr: -1, archs: [[sm_80]], r#name: r56, allow_spills: true, })
            .unwrap();
        let values: Vec<_> = fields.iter().map(|f| (&*f.name, &f.value)).collect();
        assert_eq!(
            values,
            [
                ("kdr", &FieldValue::Int(-1)),
                (
                    "archs",
                    &FieldValue::List(vec![FieldValue::List(vec![FieldValue::Word(
                        "sm_80".into()
                    )])])
                ),
                ("name", &FieldValue::Word("r56".into())),
                ("allow_spills", &FieldValue::Bool(true)),
            ]
        );
    }

    #[test]
    fn syntax_errors_are_all_reported() {
        let err = match parse_fields
            .parse2(quote! { kdr 2, nbj: 1 + 1, tile_n: 32 warps_m: 2, stages: })
        {
            Err(e) => e,
            Ok(_) => panic!("parsed"),
        };
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(
            messages,
            [
                "expected `:` after `kdr`: write `field: value`, as in `kdr: 2`",
                "`nbj` takes a value written out, as in `nbj: 64`: a string, an integer, true or false, a \
                 word or a [list], not an expression",
                "expected `,` between fields, as in `kdr: 2, nbj: 64`",
                "`stages` has no value: write it, as in `stages: 1`",
            ]
        );
    }
}
