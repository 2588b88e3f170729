//! The sample graph of the demo and the integration tests: a hand-written social network with
//! the generator's schema, small enough to check every answer by hand.
//!
//! ```text
//! Persons (id, firstName, age): 1 Ann 31, 2 Bob 42, 3 Carl 25, 4 Dana 37, 5 Eve 29, 6 Finn 55
//! KNOWS (creationDate): Ann->Bob (2015), Ann->Carl (2021), Bob->Carl (2019), Carl->Dana (2022),
//!                       Dana->Ann (2016), Eve->Ann (2023), Bob->Dana (2020)
//! Forums: 10 "Graph Lovers" (members Ann, Bob, Carl; moderator Ann, tag 300),
//!         11 "Rust Corner" (members Dana, Eve; moderator Dana, tag 301)
//! Posts: 100 (forum 10, by Ann, tags 300 301), 101 (forum 10, by Bob, tag 300),
//!        102 (forum 11, by Dana, tag 301)
//! Comments: 200 (by Carl, reply to post 100), 201 (by Bob, reply to comment 200),
//!           202 (by Eve, reply to post 102)
//! LIKES: Bob->post 100, Carl->post 100, Ann->post 102, Dana->comment 200, Ann->comment 202
//! Tags: 300 graphs (class 400 Science), 301 rust (class 401 Technology, a subclass of 400)
//! Cities: 500 Berlin (country 600 Germany), 501 Lyon (country 601 France)
//!         Ann, Bob, Eve in Berlin; Carl, Dana, Finn in Lyon
//! ```

use crate::social::{batch, edge_batch};
use crate::Table;
use arrow_array::{Array, ArrayRef, Int64Array, StringArray};
use std::sync::Arc;

/// Milliseconds since the epoch of January 1st of `year` (approximate: 365.25-day years).
pub fn year_ms(year: i64) -> i64 {
    ((year - 1970) as f64 * 365.25 * 86_400_000.0) as i64
}

fn i64s(v: &[i64]) -> ArrayRef {
    Arc::new(Int64Array::from(v.to_vec()))
}

fn strs(v: &[&str]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn edges(pairs: &[(i64, i64)]) -> (Vec<i64>, Vec<i64>) {
    pairs.iter().copied().unzip()
}

/// The sample graph with KNOWS edges that make relationship uniqueness matter: self-loops
/// (Bob, Finn), edges back (Bob->Ann, Dana->Carl) and a second Ann->Bob. A rewrite that is
/// only sound without them must not fire here.
pub fn tables_with_loops() -> Vec<Table> {
    let extra = [
        (2, 2, 2018),
        (6, 6, 2012),
        (2, 1, 2017),
        (4, 3, 2024),
        (1, 2, 2025),
    ];
    let mut t = tables();
    let knows = t
        .iter_mut()
        .find(|t| t.name == "person_knows_person")
        .expect("the sample has KNOWS");
    let col = |i: usize| {
        let c = knows.batch.column(i).as_any().downcast_ref::<Int64Array>();
        c.expect("integer columns").values().to_vec()
    };
    let (mut src, mut dst, mut date) = (col(0), col(1), col(2));
    for (a, b, y) in extra {
        src.push(a);
        dst.push(b);
        date.push(year_ms(y));
    }
    knows.batch = edge_batch(src, dst, Some(("creationDate", date)));
    t
}

/// All tables of the sample graph.
pub fn tables() -> Vec<Table> {
    let mut t = vec![
        Table::node(
            "Person",
            batch(vec![
                ("id", i64s(&[1, 2, 3, 4, 5, 6])),
                (
                    "firstName",
                    strs(&["Ann", "Bob", "Carl", "Dana", "Eve", "Finn"]),
                ),
                (
                    "lastName",
                    strs(&["Smith", "Jones", "Garcia", "Müller", "Rossi", "Larsen"]),
                ),
                (
                    "gender",
                    strs(&["female", "male", "male", "female", "female", "male"]),
                ),
                ("age", i64s(&[31, 42, 25, 37, 29, 55])),
                (
                    "birthday",
                    i64s(&[
                        year_ms(1993),
                        year_ms(1982),
                        year_ms(1999),
                        year_ms(1987),
                        year_ms(1995),
                        year_ms(1969),
                    ]),
                ),
                (
                    "creationDate",
                    i64s(&[
                        year_ms(2012),
                        year_ms(2013),
                        year_ms(2015),
                        year_ms(2014),
                        year_ms(2018),
                        year_ms(2020),
                    ]),
                ),
                (
                    "browserUsed",
                    strs(&["Firefox", "Chrome", "Firefox", "Safari", "Chrome", "Opera"]),
                ),
            ]),
        ),
        Table::node(
            "Forum",
            batch(vec![
                ("id", i64s(&[10, 11])),
                ("title", strs(&["Graph Lovers", "Rust Corner"])),
                ("creationDate", i64s(&[year_ms(2014), year_ms(2016)])),
            ]),
        ),
        Table::node(
            "Post",
            batch(vec![
                ("id", i64s(&[100, 101, 102])),
                (
                    "content",
                    strs(&["CSR beats joins", "hello graphs", "borrow checker tips"]),
                ),
                ("length", i64s(&[15, 12, 19])),
                ("language", strs(&["en", "en", "de"])),
                (
                    "creationDate",
                    i64s(&[year_ms(2019), year_ms(2020), year_ms(2021)]),
                ),
            ]),
        ),
        Table::node(
            "Comment",
            batch(vec![
                ("id", i64s(&[200, 201, 202])),
                ("content", strs(&["agreed", "me too", "thanks"])),
                ("length", i64s(&[6, 6, 6])),
                (
                    "creationDate",
                    i64s(&[year_ms(2019), year_ms(2020), year_ms(2021)]),
                ),
            ]),
        ),
        Table::node(
            "Tag",
            batch(vec![
                ("id", i64s(&[300, 301])),
                ("name", strs(&["graphs", "rust"])),
            ]),
        ),
        Table::node(
            "TagClass",
            batch(vec![
                ("id", i64s(&[400, 401])),
                ("name", strs(&["Science", "Technology"])),
            ]),
        ),
        Table::node(
            "City",
            batch(vec![
                ("id", i64s(&[500, 501])),
                ("name", strs(&["Berlin", "Lyon"])),
            ]),
        ),
        Table::node(
            "Country",
            batch(vec![
                ("id", i64s(&[600, 601])),
                ("name", strs(&["Germany", "France"])),
            ]),
        ),
    ];
    let knows = [
        (1, 2, 2015),
        (1, 3, 2021),
        (2, 3, 2019),
        (3, 4, 2022),
        (4, 1, 2016),
        (5, 1, 2023),
        (2, 4, 2020),
    ];
    t.push(Table::rel(
        "KNOWS",
        "Person",
        "Person",
        edge_batch(
            knows.iter().map(|k| k.0).collect(),
            knows.iter().map(|k| k.1).collect(),
            Some(("creationDate", knows.iter().map(|k| year_ms(k.2)).collect())),
        ),
    ));
    let member = [
        (10, 1, 2014),
        (10, 2, 2015),
        (10, 3, 2016),
        (11, 4, 2016),
        (11, 5, 2019),
    ];
    t.push(Table::rel(
        "HAS_MEMBER",
        "Forum",
        "Person",
        edge_batch(
            member.iter().map(|k| k.0).collect(),
            member.iter().map(|k| k.1).collect(),
            Some(("joinDate", member.iter().map(|k| year_ms(k.2)).collect())),
        ),
    ));
    let likes_post = [(2, 100, 2019), (3, 100, 2019), (1, 102, 2021)];
    t.push(Table::rel(
        "LIKES",
        "Person",
        "Post",
        edge_batch(
            likes_post.iter().map(|k| k.0).collect(),
            likes_post.iter().map(|k| k.1).collect(),
            Some((
                "creationDate",
                likes_post.iter().map(|k| year_ms(k.2)).collect(),
            )),
        ),
    ));
    let likes_comment = [(4, 200, 2020), (1, 202, 2022)];
    t.push(Table::rel(
        "LIKES",
        "Person",
        "Comment",
        edge_batch(
            likes_comment.iter().map(|k| k.0).collect(),
            likes_comment.iter().map(|k| k.1).collect(),
            Some((
                "creationDate",
                likes_comment.iter().map(|k| year_ms(k.2)).collect(),
            )),
        ),
    ));
    let plain: Vec<(&str, &str, &str, Vec<(i64, i64)>)> = vec![
        ("HAS_MODERATOR", "Forum", "Person", vec![(10, 1), (11, 4)]),
        (
            "CONTAINER_OF",
            "Forum",
            "Post",
            vec![(10, 100), (10, 101), (11, 102)],
        ),
        (
            "HAS_CREATOR",
            "Post",
            "Person",
            vec![(100, 1), (101, 2), (102, 4)],
        ),
        (
            "HAS_CREATOR",
            "Comment",
            "Person",
            vec![(200, 3), (201, 2), (202, 5)],
        ),
        ("REPLY_OF", "Comment", "Post", vec![(200, 100), (202, 102)]),
        ("REPLY_OF", "Comment", "Comment", vec![(201, 200)]),
        (
            "HAS_TAG",
            "Post",
            "Tag",
            vec![(100, 300), (100, 301), (101, 300), (102, 301)],
        ),
        ("HAS_TAG", "Comment", "Tag", vec![(200, 300)]),
        ("HAS_TAG", "Forum", "Tag", vec![(10, 300), (11, 301)]),
        (
            "HAS_INTEREST",
            "Person",
            "Tag",
            vec![(1, 300), (1, 301), (2, 300), (4, 301), (6, 301)],
        ),
        ("HAS_TYPE", "Tag", "TagClass", vec![(300, 400), (301, 401)]),
        ("IS_SUBCLASS_OF", "TagClass", "TagClass", vec![(401, 400)]),
        (
            "IS_LOCATED_IN",
            "Person",
            "City",
            vec![(1, 500), (2, 500), (5, 500), (3, 501), (4, 501), (6, 501)],
        ),
        (
            "IS_PART_OF",
            "City",
            "Country",
            vec![(500, 600), (501, 601)],
        ),
    ];
    for (rt, from, to, pairs) in plain {
        let (s, d) = edges(&pairs);
        t.push(Table::rel(rt, from, to, edge_batch(s, d, None)));
    }
    crate::label_hierarchy(&mut t);
    t
}
