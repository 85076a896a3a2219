//! Variant names a config may use: the catalogue's, its extras' and the config's own `[[variant]]` tables,
//! each declared and canonical name answering to one variant.

use super::*;

/// Names in a list shown in a sentence: the first [`NAMES_LISTED`], then how many more.
pub(super) const NAMES_LISTED: usize = 40;

pub(super) fn listed(names: impl Iterator<Item = String>, count: usize) -> Vec<String> {
    let mut out: Vec<String> = names.take(NAMES_LISTED).map(|n| shown(&n)).collect();
    if count > NAMES_LISTED {
        out.push(format!("and {} more", count - NAMES_LISTED));
    }
    out
}

/// A variant whose declared or canonical name another variant already answers to; lookups by that name would
/// return the other one, so it is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameClash {
    /// Its declared name is another variant's declared or canonical name.
    #[error("variant '{name}' is already taken (by {by}); pick another name")]
    Name { name: String, by: String },
    /// It renders the same kernel as another variant, whose canonical name is already taken.
    #[error(
        "variant '{name}' is the same kernel as variant '{other}' (canonical name {canonical}), which is already \
         declared; declare each kernel once"
    )]
    Canonical {
        name: String,
        other: String,
        canonical: String,
    },
}

/// Every declared and canonical name of a list of variants, for lookups in constant time and for refusing a
/// variant whose names are taken (docs/DESIGN.md D7: names are unique across declared and canonical names).
#[derive(Clone, Debug, Default)]
pub struct VariantNames {
    /// name -> (index, whether it is the declared name).
    map: HashMap<String, (usize, bool)>,
}

impl VariantNames {
    /// The names of `list`, which is trusted as given (the catalogue); later variants are added with
    /// [`VariantNames::add`]. On a name shared inside `list`, the first variant keeps it, as `find` does.
    pub fn new(list: &[VariantDescription]) -> VariantNames {
        let mut names = VariantNames::default();
        for (i, v) in list.iter().enumerate() {
            names.map.entry(v.name.to_string()).or_insert((i, true));
        }
        for (i, v) in list.iter().enumerate() {
            names.map.entry(canonical_name(v)).or_insert((i, false));
        }
        names
    }

    /// Adds `v` as variant `index` of `list` (its index once pushed), or says which of its names is taken.
    pub fn add(
        &mut self,
        v: &VariantDescription,
        index: usize,
        list: &[VariantDescription],
    ) -> Result<(), NameClash> {
        let canonical = canonical_name(v);
        if let Some(&(owner, declared)) = self.map.get(v.name.as_ref()) {
            let other = &list[owner];
            return Err(NameClash::Name {
                name: shown(&v.name),
                by: if declared {
                    canonical_name(other)
                } else {
                    format!("the canonical name of variant '{}'", shown(&other.name))
                },
            });
        }
        if let Some(&(owner, _)) = self.map.get(&canonical) {
            return Err(NameClash::Canonical {
                name: shown(&v.name),
                other: shown(&list[owner].name),
                canonical,
            });
        }
        self.map.insert(v.name.to_string(), (index, true));
        self.map.entry(canonical).or_insert((index, false));
        Ok(())
    }

    /// The index of the variant answering to `name` (declared or canonical).
    pub fn get(&self, name: &str) -> Option<usize> {
        self.map.get(name).map(|&(i, _)| i)
    }
}
