//! A deterministic LDBC-SNB-like social network. Scale N means N x 1,000 persons; KNOWS
//! out-degrees follow a power law with a mean of about 25; the same seed gives the same graph.
//!
//! Ids are int64, unique per label and not dense (`base + 7 * i`); dates are int64 epoch ms.

use crate::Table;
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;
use std::sync::Arc;

const FIRST: &[&str] = &[
    "Ann", "Bob", "Carl", "Dana", "Eve", "Finn", "Gus", "Hana", "Ivan", "Jae", "Kim", "Lea",
    "Maya", "Nils", "Olga", "Per", "Quin", "Rosa", "Sven", "Tara", "Uma", "Vik", "Wen", "Xia",
    "Yusuf", "Zoe",
];
const LAST: &[&str] = &[
    "Smith", "Jones", "Garcia", "Müller", "Rossi", "Kowalski", "Nguyen", "Kim", "Silva", "Novak",
    "Tanaka", "Okafor", "Larsen", "Dubois", "Ivanova", "Haddad",
];
const BROWSERS: &[&str] = &["Firefox", "Chrome", "Safari", "Opera", "Edge"];
const LANGS: &[&str] = &["en", "de", "fr", "es", "zh", "pt", "ru"];
const WORDS: &[&str] = &[
    "graph", "query", "lance", "arrow", "join", "edge", "node", "fast", "index", "hop", "path",
    "data", "table", "column", "vector", "stream", "batch", "cache", "plan", "rule",
];

/// 2010-01-01 in epoch milliseconds; creation dates fall in the ten years after.
const EPOCH_2010: i64 = 1_262_304_000_000;
const TEN_YEARS_MS: i64 = 10 * 365 * 24 * 3600 * 1000;
const DAY_MS: i64 = 24 * 3600 * 1000;

/// The id of the i-th node of a label: not dense, unique per label.
pub fn node_id(base: i64, i: usize) -> i64 {
    base + 7 * i as i64
}

pub const PERSON_BASE: i64 = 1_000;
pub const FORUM_BASE: i64 = 2_000_000_000;
pub const POST_BASE: i64 = 4_000_000_000;
pub const COMMENT_BASE: i64 = 6_000_000_000;
pub const TAG_BASE: i64 = 8_000_000_000;
pub const TAGCLASS_BASE: i64 = 8_500_000_000;
pub const CITY_BASE: i64 = 9_000_000_000;
pub const COUNTRY_BASE: i64 = 9_500_000_000;
pub const UNIVERSITY_BASE: i64 = 9_700_000_000;
pub const COMPANY_BASE: i64 = 9_800_000_000;

/// Table sizes for a scale.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub persons: usize,
    pub forums: usize,
    pub posts: usize,
    pub comments: usize,
    pub tags: usize,
    pub tag_classes: usize,
    pub cities: usize,
    pub countries: usize,
}

impl Sizes {
    pub fn for_scale(scale: f64) -> Self {
        let persons = ((scale * 1000.0).round() as usize).max(10);
        Self {
            persons,
            forums: (persons / 10).max(2),
            posts: persons * 2,
            comments: persons * 3,
            tags: (persons / 20).clamp(20, 5000),
            tag_classes: 40,
            cities: (persons / 50).clamp(10, 2000),
            countries: 30,
        }
    }
}

fn i64s(v: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::from(v))
}

fn strs(v: Vec<String>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

/// A batch of non-null columns.
pub fn batch(cols: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), false))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|(_, a)| a).collect(),
    )
    .expect("generated columns have equal lengths")
}

/// An edge list with optional date property, as a relationship batch.
pub fn edge_batch(src: Vec<i64>, dst: Vec<i64>, prop: Option<(&str, Vec<i64>)>) -> RecordBatch {
    let mut cols = vec![("src", i64s(src)), ("dst", i64s(dst))];
    if let Some((n, v)) = prop {
        cols.push((n, i64s(v)));
    }
    batch(cols)
}

/// The empty schema of a relationship table (for docs/tests).
pub fn edge_schema(prop: Option<&str>) -> Schema {
    let mut f = vec![
        Field::new("src", DataType::Int64, false),
        Field::new("dst", DataType::Int64, false),
    ];
    if let Some(p) = prop {
        f.push(Field::new(p, DataType::Int64, false));
    }
    Schema::new(f)
}

/// A table of `n` nodes with ids from `base` and names `{prefix}{i}`.
fn named(label: &str, base: i64, n: usize, prefix: &str) -> Table {
    Table::node(
        label,
        batch(vec![
            ("id", i64s((0..n).map(|i| node_id(base, i)).collect())),
            (
                "name",
                strs((0..n).map(|i| format!("{prefix}{i}")).collect()),
            ),
        ]),
    )
}

/// A stream of random numbers per table, so tables don't depend on each other's draws.
fn rng(seed: u64, table: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ table)
}

/// Power-law out-degree: Pareto with alpha 2.5 scaled to a mean of about 25, capped.
fn power_law_degree(r: &mut ChaCha8Rng, cap: usize) -> usize {
    let u: f64 = r.gen_range(0.0..1.0);
    // Continuous Pareto(xmin, alpha): mean = xmin * (alpha - 1) / (alpha - 2) = 3 * xmin.
    let xmin = 8.6;
    let d = xmin * (1.0 - u).powf(-1.0 / 1.5);
    (d.floor() as usize).min(cap)
}

fn date(r: &mut ChaCha8Rng) -> i64 {
    EPOCH_2010 + r.gen_range(0..TEN_YEARS_MS)
}

fn text(r: &mut ChaCha8Rng, words: usize) -> String {
    (0..words)
        .map(|_| WORDS[r.gen_range(0..WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Random distinct targets in `0..n` (excluding `not`), `k` of them.
fn distinct_targets(r: &mut ChaCha8Rng, n: usize, k: usize, not: Option<usize>) -> Vec<usize> {
    let k = k.min(n.saturating_sub(not.is_some() as usize));
    let mut seen = HashSet::with_capacity(k);
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let t = r.gen_range(0..n);
        if Some(t) != not && seen.insert(t) {
            out.push(t);
        }
    }
    out
}

/// Generates every table; `progress` gets a line per table.
pub fn generate(scale: f64, seed: u64, progress: &mut dyn FnMut(&str)) -> Vec<Table> {
    let s = Sizes::for_scale(scale);
    let mut tables = Vec::new();
    let push = |t: Table, tables: &mut Vec<Table>, progress: &mut dyn FnMut(&str)| {
        progress(&format!("{:<28} {:>10} rows", t.name, t.batch.num_rows()));
        tables.push(t);
    };

    // Persons.
    {
        let mut r = rng(seed, 1);
        let n = s.persons;
        let (mut id, mut first, mut last, mut gender, mut age, mut bday, mut created, mut browser) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for i in 0..n {
            id.push(node_id(PERSON_BASE, i));
            first.push(FIRST[r.gen_range(0..FIRST.len())].to_string());
            last.push(LAST[r.gen_range(0..LAST.len())].to_string());
            gender.push(if r.gen_bool(0.5) { "female" } else { "male" }.to_string());
            let a = r.gen_range(18i64..80);
            age.push(a);
            bday.push(EPOCH_2010 - a * 365 * DAY_MS + r.gen_range(0..365 * DAY_MS));
            created.push(date(&mut r));
            browser.push(BROWSERS[r.gen_range(0..BROWSERS.len())].to_string());
        }
        push(
            Table::node(
                "Person",
                batch(vec![
                    ("id", i64s(id)),
                    ("firstName", strs(first)),
                    ("lastName", strs(last)),
                    ("gender", strs(gender)),
                    ("age", i64s(age)),
                    ("birthday", i64s(bday)),
                    ("creationDate", i64s(created)),
                    ("browserUsed", strs(browser)),
                ]),
            ),
            &mut tables,
            progress,
        );
    }
    // KNOWS: power-law out-degree, distinct targets per person, no self loops.
    {
        let mut r = rng(seed, 2);
        let n = s.persons;
        let cap = (n - 1).min(5000);
        let (mut src, mut dst, mut created) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..n {
            let d = power_law_degree(&mut r, cap);
            for t in distinct_targets(&mut r, n, d, Some(i)) {
                src.push(node_id(PERSON_BASE, i));
                dst.push(node_id(PERSON_BASE, t));
                created.push(date(&mut r));
            }
        }
        push(
            Table::rel(
                "KNOWS",
                "Person",
                "Person",
                edge_batch(src, dst, Some(("creationDate", created))),
            ),
            &mut tables,
            progress,
        );
    }
    // Small dimension tables.
    push(
        named("Tag", TAG_BASE, s.tags, "tag_"),
        &mut tables,
        progress,
    );
    push(
        named("TagClass", TAGCLASS_BASE, s.tag_classes, "class_"),
        &mut tables,
        progress,
    );
    push(
        named("City", CITY_BASE, s.cities, "city_"),
        &mut tables,
        progress,
    );
    push(
        named("Country", COUNTRY_BASE, s.countries, "country_"),
        &mut tables,
        progress,
    );
    // Forums.
    {
        let mut r = rng(seed, 3);
        let n = s.forums;
        let mut created = Vec::with_capacity(n);
        let mut title = Vec::with_capacity(n);
        for i in 0..n {
            created.push(date(&mut r));
            title.push(format!("Forum {i}: {}", text(&mut r, 2)));
        }
        push(
            Table::node(
                "Forum",
                batch(vec![
                    ("id", i64s((0..n).map(|i| node_id(FORUM_BASE, i)).collect())),
                    ("title", strs(title)),
                    ("creationDate", i64s(created)),
                ]),
            ),
            &mut tables,
            progress,
        );
    }
    // Posts and comments.
    let content_table = |label: &str, base: i64, n: usize, table: u64, with_lang: bool| {
        let mut r = rng(seed, table);
        let (mut content, mut length, mut lang, mut created) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n {
            let words = r.gen_range(2..12);
            let c = text(&mut r, words);
            length.push(c.len() as i64);
            content.push(c);
            lang.push(LANGS[r.gen_range(0..LANGS.len())].to_string());
            created.push(date(&mut r));
        }
        let mut cols = vec![
            ("id", i64s((0..n).map(|i| node_id(base, i)).collect())),
            ("content", strs(content)),
            ("length", i64s(length)),
        ];
        if with_lang {
            cols.push(("language", strs(lang)));
        }
        cols.push(("creationDate", i64s(created)));
        Table::node(label, batch(cols))
    };
    push(
        content_table("Post", POST_BASE, s.posts, 4, true),
        &mut tables,
        progress,
    );
    push(
        content_table("Comment", COMMENT_BASE, s.comments, 5, false),
        &mut tables,
        progress,
    );

    // Relationship tables between them.
    let mut r = rng(seed, 6);
    let edges = |from_base: i64,
                 n_from: usize,
                 to_base: i64,
                 n_to: usize,
                 per: std::ops::Range<usize>,
                 date_prop: Option<&str>,
                 r: &mut ChaCha8Rng| {
        let (mut src, mut dst, mut dates) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..n_from {
            let k = if per.start + 1 == per.end {
                per.start
            } else {
                r.gen_range(per.clone())
            };
            for t in distinct_targets(r, n_to, k, None) {
                src.push(node_id(from_base, i));
                dst.push(node_id(to_base, t));
                if date_prop.is_some() {
                    dates.push(date(r));
                }
            }
        }
        edge_batch(src, dst, date_prop.map(|p| (p, dates)))
    };
    let specs: Vec<(&str, &str, &str, RecordBatch)> = vec![
        (
            "HAS_MEMBER",
            "Forum",
            "Person",
            edges(
                FORUM_BASE,
                s.forums,
                PERSON_BASE,
                s.persons,
                5..36,
                Some("joinDate"),
                &mut r,
            ),
        ),
        (
            "HAS_MODERATOR",
            "Forum",
            "Person",
            edges(
                FORUM_BASE,
                s.forums,
                PERSON_BASE,
                s.persons,
                1..2,
                None,
                &mut r,
            ),
        ),
        (
            "HAS_TAG",
            "Forum",
            "Tag",
            edges(FORUM_BASE, s.forums, TAG_BASE, s.tags, 1..4, None, &mut r),
        ),
        (
            "HAS_CREATOR",
            "Post",
            "Person",
            edges(
                POST_BASE,
                s.posts,
                PERSON_BASE,
                s.persons,
                1..2,
                None,
                &mut r,
            ),
        ),
        (
            "HAS_CREATOR",
            "Comment",
            "Person",
            edges(
                COMMENT_BASE,
                s.comments,
                PERSON_BASE,
                s.persons,
                1..2,
                None,
                &mut r,
            ),
        ),
        (
            "HAS_TAG",
            "Post",
            "Tag",
            edges(POST_BASE, s.posts, TAG_BASE, s.tags, 1..4, None, &mut r),
        ),
        (
            "HAS_TAG",
            "Comment",
            "Tag",
            edges(
                COMMENT_BASE,
                s.comments,
                TAG_BASE,
                s.tags,
                0..2,
                None,
                &mut r,
            ),
        ),
        (
            "LIKES",
            "Person",
            "Post",
            edges(
                PERSON_BASE,
                s.persons,
                POST_BASE,
                s.posts,
                0..11,
                Some("creationDate"),
                &mut r,
            ),
        ),
        (
            "LIKES",
            "Person",
            "Comment",
            edges(
                PERSON_BASE,
                s.persons,
                COMMENT_BASE,
                s.comments,
                0..11,
                Some("creationDate"),
                &mut r,
            ),
        ),
        (
            "HAS_INTEREST",
            "Person",
            "Tag",
            edges(PERSON_BASE, s.persons, TAG_BASE, s.tags, 1..6, None, &mut r),
        ),
        (
            "IS_LOCATED_IN",
            "Person",
            "City",
            edges(
                PERSON_BASE,
                s.persons,
                CITY_BASE,
                s.cities,
                1..2,
                None,
                &mut r,
            ),
        ),
        (
            "IS_PART_OF",
            "City",
            "Country",
            edges(
                CITY_BASE,
                s.cities,
                COUNTRY_BASE,
                s.countries,
                1..2,
                None,
                &mut r,
            ),
        ),
        (
            "HAS_TYPE",
            "Tag",
            "TagClass",
            edges(
                TAG_BASE,
                s.tags,
                TAGCLASS_BASE,
                s.tag_classes,
                1..2,
                None,
                &mut r,
            ),
        ),
    ];
    for (t, f, to, b) in specs {
        push(Table::rel(t, f, to, b), &mut tables, progress);
    }
    // Forum CONTAINER_OF each post exactly once.
    {
        let src = (0..s.posts)
            .map(|_| node_id(FORUM_BASE, r.gen_range(0..s.forums)))
            .collect();
        let dst = (0..s.posts).map(|i| node_id(POST_BASE, i)).collect();
        push(
            Table::rel("CONTAINER_OF", "Forum", "Post", edge_batch(src, dst, None)),
            &mut tables,
            progress,
        );
    }
    // REPLY_OF: 70% of comments reply to a post, the rest to an earlier comment.
    {
        let (mut ps, mut pd, mut cs, mut cd) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for i in 0..s.comments {
            if i == 0 || r.gen_bool(0.7) {
                ps.push(node_id(COMMENT_BASE, i));
                pd.push(node_id(POST_BASE, r.gen_range(0..s.posts)));
            } else {
                cs.push(node_id(COMMENT_BASE, i));
                cd.push(node_id(COMMENT_BASE, r.gen_range(0..i)));
            }
        }
        push(
            Table::rel("REPLY_OF", "Comment", "Post", edge_batch(ps, pd, None)),
            &mut tables,
            progress,
        );
        push(
            Table::rel("REPLY_OF", "Comment", "Comment", edge_batch(cs, cd, None)),
            &mut tables,
            progress,
        );
    }
    // IS_SUBCLASS_OF: a tree over tag classes (class i -> a class below i).
    {
        let src: Vec<i64> = (1..s.tag_classes)
            .map(|i| node_id(TAGCLASS_BASE, i))
            .collect();
        let dst: Vec<i64> = (1..s.tag_classes)
            .map(|i| node_id(TAGCLASS_BASE, r.gen_range(0..i)))
            .collect();
        push(
            Table::rel(
                "IS_SUBCLASS_OF",
                "TagClass",
                "TagClass",
                edge_batch(src, dst, None),
            ),
            &mut tables,
            progress,
        );
    }
    crate::label_hierarchy(&mut tables);
    tables
}

/// The LDBC SNB Interactive schema: [`generate`]'s tables plus what the published read queries
/// also use: universities and companies (both `Organisation`s, in cities and countries),
/// `STUDY_AT {classYear}` and `WORK_AT {workFrom}`, the country a message was posted from, a
/// person's `locationIP`, `email` and `speaks` lists, and a post's `imageFile` (a third of
/// the posts are images: no content). Dates stay epoch milliseconds, as the published
/// Cypher texts of the reference implementation compare them with integers. The extra draws
/// come from streams of their own, so `generate`'s tables are the same.
pub fn generate_ldbc(scale: f64, seed: u64, progress: &mut dyn FnMut(&str)) -> Vec<Table> {
    let s = Sizes::for_scale(scale);
    let mut tables = generate(scale, seed, progress);
    let mut r = rng(seed, 100);
    for t in &mut tables {
        if t.name == "person" {
            let n = t.batch.num_rows();
            let mut ip = Vec::with_capacity(n);
            let mut email = ListBuilder::new(StringBuilder::new());
            let mut speaks = ListBuilder::new(StringBuilder::new());
            for i in 0..n {
                let octets: Vec<String> = (0..4).map(|_| r.gen_range(1..255).to_string()).collect();
                ip.push(octets.join("."));
                for k in 0..r.gen_range(1..3) {
                    email.values().append_value(format!("p{i}.{k}@example.org"));
                }
                email.append(true);
                let k = r.gen_range(1..3);
                for l in distinct_targets(&mut r, LANGS.len(), k, None) {
                    speaks.values().append_value(LANGS[l]);
                }
                speaks.append(true);
            }
            t.batch = with_columns(
                &t.batch,
                vec![
                    ("locationIP", strs(ip), false),
                    ("email", Arc::new(email.finish()), false),
                    ("speaks", Arc::new(speaks.finish()), false),
                ],
            );
        }
        if t.name == "post" {
            // An image post has an imageFile and no content.
            let n = t.batch.num_rows();
            let image: Vec<bool> = (0..n).map(|_| r.gen_bool(1.0 / 3.0)).collect();
            let content = t
                .batch
                .column_by_name("content")
                .expect("posts have content");
            let content = content
                .as_any()
                .downcast_ref::<StringArray>()
                .expect("text");
            let content: StringArray = (0..n)
                .map(|i| (!image[i]).then(|| content.value(i).to_string()))
                .collect();
            let files: StringArray = (0..n)
                .map(|i| image[i].then(|| format!("photo{i}.jpg")))
                .collect();
            let mut cols: Vec<(String, ArrayRef, bool)> = Vec::new();
            for (f, c) in t.batch.schema().fields().iter().zip(t.batch.columns()) {
                if f.name() == "content" {
                    cols.push((f.name().clone(), Arc::new(content.clone()), true));
                    cols.push(("imageFile".into(), Arc::new(files.clone()), true));
                } else {
                    cols.push((f.name().clone(), c.clone(), false));
                }
            }
            t.batch = nullable_batch(cols);
        }
    }
    let (universities, companies) = ((s.cities / 2).max(5), (s.countries * 2).max(10));
    let mut university = named("University", UNIVERSITY_BASE, universities, "university_");
    let mut company = named("Company", COMPANY_BASE, companies, "company_");
    for t in [&mut university, &mut company] {
        if let crate::TableKind::Node { extra_labels, .. } = &mut t.kind {
            extra_labels.push("Organisation".into());
        }
    }
    tables.push(university);
    tables.push(company);
    progress("generated University, Company");
    let mut r = rng(seed, 101);
    // (type, from, its base and count, to, its base and count, targets per source, a year
    // property and its range)
    type Spec<'a> = (
        &'a str,
        (&'a str, i64, usize),
        (&'a str, i64, usize),
        std::ops::Range<usize>,
        Option<(&'a str, std::ops::Range<i64>)>,
    );
    let specs: Vec<Spec> = vec![
        (
            "IS_LOCATED_IN",
            ("University", UNIVERSITY_BASE, universities),
            ("City", CITY_BASE, s.cities),
            1..2,
            None,
        ),
        (
            "IS_LOCATED_IN",
            ("Company", COMPANY_BASE, companies),
            ("Country", COUNTRY_BASE, s.countries),
            1..2,
            None,
        ),
        (
            "IS_LOCATED_IN",
            ("Post", POST_BASE, s.posts),
            ("Country", COUNTRY_BASE, s.countries),
            1..2,
            None,
        ),
        (
            "IS_LOCATED_IN",
            ("Comment", COMMENT_BASE, s.comments),
            ("Country", COUNTRY_BASE, s.countries),
            1..2,
            None,
        ),
        (
            "STUDY_AT",
            ("Person", PERSON_BASE, s.persons),
            ("University", UNIVERSITY_BASE, universities),
            0..2,
            Some(("classYear", 2000..2013)),
        ),
        (
            "WORK_AT",
            ("Person", PERSON_BASE, s.persons),
            ("Company", COMPANY_BASE, companies),
            0..3,
            Some(("workFrom", 1998..2013)),
        ),
    ];
    for (t, (from, from_base, n_from), (to, to_base, n_to), per, year) in specs {
        let (mut src, mut dst) = (Vec::new(), Vec::new());
        for i in 0..n_from {
            let k = r.gen_range(per.clone());
            for t in distinct_targets(&mut r, n_to, k, None) {
                src.push(node_id(from_base, i));
                dst.push(node_id(to_base, t));
            }
        }
        let prop = year.map(|(name, years)| {
            let values: Vec<i64> = src.iter().map(|_| r.gen_range(years.clone())).collect();
            (name, values)
        });
        tables.push(Table::rel(t, from, to, edge_batch(src, dst, prop)));
    }
    progress("generated STUDY_AT, WORK_AT, IS_LOCATED_IN of organisations and messages");
    tables
}

/// `b` with `extra` columns appended (name, column, nullable).
/// The embedding column [`with_embeddings`] adds.
pub const EMBEDDING: &str = "embedding";

/// Adds a deterministic `embedding` column (`FixedSizeList<Float32>` of `dim` values, as
/// Lance stores vectors) to the `person` and `post` tables: each row near one of 16 random
/// unit centres (a centre plus noise of a tenth its size, normalised), so that nearest
/// neighbours mean something (rows of one cluster are near each other).
pub fn with_embeddings(tables: &mut [Table], dim: usize, seed: u64) {
    use arrow_array::builder::{FixedSizeListBuilder, Float32Builder};
    const CLUSTERS: usize = 16;
    let unit = |v: &mut Vec<f32>| {
        let norm = v
            .iter()
            .map(|x| x * x)
            .sum::<f32>()
            .sqrt()
            .max(f32::MIN_POSITIVE);
        v.iter_mut().for_each(|x| *x /= norm);
    };
    let mut r = rng(seed, 200);
    let centres: Vec<Vec<f32>> = (0..CLUSTERS)
        .map(|_| {
            let mut c: Vec<f32> = (0..dim).map(|_| r.gen_range(-1.0f32..1.0)).collect();
            unit(&mut c);
            c
        })
        .collect();
    for (k, t) in tables
        .iter_mut()
        .filter(|t| t.name == "person" || t.name == "post")
        .enumerate()
    {
        let mut r = rng(seed, 201 + k as u64);
        let n = t.batch.num_rows();
        let mut b = FixedSizeListBuilder::with_capacity(
            Float32Builder::with_capacity(n * dim),
            dim as i32,
            n,
        );
        let mut v = Vec::with_capacity(dim);
        for _ in 0..n {
            let c = &centres[r.gen_range(0..CLUSTERS)];
            v.clear();
            v.extend(c.iter().map(|x| x + r.gen_range(-0.1f32..0.1)));
            unit(&mut v);
            b.values().append_slice(&v);
            b.append(true);
        }
        t.batch = with_columns(&t.batch, vec![(EMBEDDING, Arc::new(b.finish()), false)]);
    }
}

fn with_columns(b: &RecordBatch, extra: Vec<(&str, ArrayRef, bool)>) -> RecordBatch {
    let mut cols: Vec<(String, ArrayRef, bool)> = b
        .schema()
        .fields()
        .iter()
        .zip(b.columns())
        .map(|(f, c)| (f.name().clone(), c.clone(), f.is_nullable()))
        .collect();
    cols.extend(
        extra
            .into_iter()
            .map(|(n, c, null)| (n.to_string(), c, null)),
    );
    nullable_batch(cols)
}

/// A batch of columns, each nullable or not.
fn nullable_batch(cols: Vec<(String, ArrayRef, bool)>) -> RecordBatch {
    let fields: Vec<Field> = cols
        .iter()
        .map(|(n, a, null)| Field::new(n, a.data_type().clone(), *null))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        cols.into_iter().map(|(_, a, _)| a).collect(),
    )
    .expect("generated columns have equal lengths")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_graph_and_mean_degree_near_25() {
        let a = generate(2.0, 42, &mut |_| {});
        let b = generate(2.0, 42, &mut |_| {});
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.name, y.name);
            assert_eq!(x.batch, y.batch);
        }
        let c = generate(2.0, 43, &mut |_| {});
        let knows = |ts: &[Table]| {
            ts.iter()
                .find(|t| t.name == "person_knows_person")
                .unwrap()
                .batch
                .clone()
        };
        assert_ne!(knows(&a), knows(&c));
        let mean = knows(&a).num_rows() as f64 / 2000.0;
        assert!((20.0..30.0).contains(&mean), "mean KNOWS out-degree {mean}");
        // Ids are unique per label.
        let person = a.iter().find(|t| t.name == "person").unwrap();
        let ids = person
            .batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let uniq: HashSet<i64> = ids.values().iter().copied().collect();
        assert_eq!(uniq.len(), ids.len());
    }

    #[test]
    fn fractional_scale() {
        let t = generate(0.1, 1, &mut |_| {});
        let person = t.iter().find(|t| t.name == "person").unwrap();
        assert_eq!(person.batch.num_rows(), 100);
    }
}
