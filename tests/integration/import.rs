//! `lance-csr import` end to end: values kept as the files write them (datetimes with their
//! offsets, the types a neo4j-admin header declares), files whose rows go to several tables,
//! and errors that name the file, the line and the column.

use crate::common::cli::{query_csv, run, stderr, stdout};
use std::path::{Path, PathBuf};

/// Writes `text` to `dir/name`; returns the path.
fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// `lance-csr import --out DIR/NAME ARGS..`: the graph.toml and the progress printed, or the
/// error printed.
fn import(dir: &Path, name: &str, args: &[&str]) -> Result<(PathBuf, String), String> {
    let out = dir.join(name);
    let mut all = vec!["import", "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = run(&all);
    match o.status.success() {
        true => Ok((PathBuf::from(stdout(&o).trim()), stderr(&o))),
        false => Err(stderr(&o)),
    }
}

/// A datetime with an offset is a zoned datetime (not a local one that compares with nothing),
/// in the zone its column shares; without an offset it stays local.
#[test]
fn offset_datetimes_compare_with_datetime_values() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let posts = write(
        d,
        "posts.csv",
        "id,creationDate,local,paris\n\
         1,2010-03-13T02:10:23.099+00:00,2010-03-13T02:10:23,2010-03-13T02:10:23+01:00\n\
         2,2012-07-01T10:00:00.000+00:00,2012-07-01T10:00:00,2012-07-01T10:00:00+01:00\n",
    );
    let (cfg, log) = import(d, "g", &["--node", &format!("Post={posts}")]).unwrap();
    assert!(log.contains("posts.csv:"), "{log}");
    assert!(log.contains("  creationDate: datetime (+00:00)"), "{log}");
    assert!(log.contains("  local: localdatetime"), "{log}");
    assert!(log.contains("  paris: datetime (+01:00)"), "{log}");
    assert!(log.contains("  id: integer"), "{log}");
    let q = |text: &str| query_csv(&cfg, text);
    assert_eq!(
        q("MATCH (p:Post) WHERE p.creationDate > datetime('2011-01-01T00:00:00Z') RETURN p.id AS id"),
        "id\n2\n"
    );
    assert_eq!(
        q("MATCH (p:Post) WHERE p.creationDate < datetime('2010-03-13T03:10:24+01:00') RETURN p.id AS id"),
        "id\n1\n"
    );
    assert_eq!(
        q("MATCH (p:Post) WHERE p.local < localdatetime('2011-01-01T00:00:00') RETURN p.id AS id"),
        "id\n1\n"
    );
    assert_eq!(
        q("MATCH (p:Post) WHERE p.id = 1 RETURN p.creationDate.epochMillis AS ms, p.paris.offset AS o"),
        "ms,o\n1268446223099,+01:00\n"
    );
}

/// Values at several offsets keep their instants (in UTC), and the import says so; values with
/// and without offsets in one column are refused, naming the line.
#[test]
fn mixed_offsets_keep_their_instants_and_a_missing_offset_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let events = write(
        d,
        "events.csv",
        "id,t\n1,2020-01-01T10:00:00+02:00\n2,2020-01-01T09:00:00+00:00\n",
    );
    let (cfg, log) = import(d, "g", &["--node", &format!("Event={events}")]).unwrap();
    assert!(
        log.contains("warning:")
            && log.contains("events.csv")
            && log.contains("column `t`")
            && log.contains("+00:00, +02:00"),
        "{log}"
    );
    assert!(log.contains("  t: datetime (+00:00)"), "{log}");
    assert_eq!(
        query_csv(
            &cfg,
            "MATCH (e:Event) RETURN e.t.epochMillis AS ms, e.t.offset AS o ORDER BY e.id"
        ),
        "ms,o\n1577865600000,+00:00\n1577869200000,+00:00\n"
    );
    let mixed = write(
        d,
        "mixed.csv",
        "id,t\n1,2020-01-01T10:00:00+02:00\n2,2020-01-01T10:00:00\n",
    );
    let e = import(d, "h", &["--node", &format!("Event={mixed}")]).unwrap_err();
    assert!(
        e.contains("mixed.csv") && e.contains("line 3") && e.contains("column `t`"),
        "{e}"
    );
}

/// A cell that does not parse as its column's type (inferred from the first 10,000 rows) is an
/// error naming the file, the line and the column, and nothing is written.
#[test]
fn a_bad_cell_past_the_sample_names_its_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rows: String = (1..=10_000).map(|i| format!("{i},A\n")).collect();
    let late = write(d, "late.csv", &format!("id,name\n{rows}x,B\n"));
    let e = import(d, "g", &["--node", &format!("User={late}")]).unwrap_err();
    assert!(
        e.contains("late.csv")
            && e.contains("line 10002")
            && e.contains("column `id`")
            && e.contains("`x` is not an integer"),
        "{e}"
    );
    assert!(!d.join("g").join("graph.toml").exists());
}

/// neo4j-admin's layout as LDBC and LSQB publish it: `|`, ID spaces, typed columns, arrays,
/// `:IGNORE`, `:LABEL` (a table per label) and `:TYPE` (a table per type); relationship ends
/// found through the ID spaces, split by the table that holds each key.
#[test]
fn neo4j_admin_files_import_as_published() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let place = write(
        d,
        "place.csv",
        "id:ID(Place)|name:string|url:IGNORE|:LABEL\n\
         1|Berlin|http://b|City\n\
         2|Germany|http://g|Country\n\
         3|Europe|http://e|Continent\n\
         4|Paris|http://p|City\n\
         5|France|http://f|Country\n",
    );
    let person = write(
        d,
        "person.csv",
        "id:ID(Person)|firstName:string|birthday:date|creationDate:DATETIME|tags:string[]|scores:int[]|note:IGNORE\n\
         10|Ann|1990-01-02|2010-03-13T02:10:23.099+00:00|a;b|1;2|x\n\
         11|Bob|1985-05-06|2011-01-01T00:00:00.000+00:00||3|y\n",
    );
    let located = write(
        d,
        "person_isLocatedIn_place.csv",
        ":START_ID(Person)|:END_ID(Place)|since:int\n10|1|2000\n11|4|2001\n",
    );
    let part_of = write(
        d,
        "place_isPartOf_place.csv",
        ":START_ID(Place)|:END_ID(Place)\n1|2\n4|5\n2|3\n5|3\n",
    );
    let typed = write(
        d,
        "person_person.csv",
        ":START_ID(Person)|:END_ID(Person)|weight:float|:TYPE\n\
         10|11|0.5|KNOWS\n\
         11|10|1.5|LIKES\n\
         10|11|2|LIKES\n",
    );
    let (cfg, log) = import(
        d,
        "g",
        &[
            "--delimiter",
            "|",
            "--node",
            &format!("Place={place}"),
            "--node",
            &format!("Person={person}"),
            "--rel",
            &format!("IS_LOCATED_IN={located}"),
            "--rel",
            &format!("IS_PART_OF={part_of}"),
            "--rel",
            &format!("={typed}"),
        ],
    )
    .unwrap();
    for line in [
        "person.csv (neo4j-admin header):",
        "  id: integer (the id, ID space Person)",
        "  creationDate: datetime (+00:00), as declared",
        "  tags: list of string, as declared",
        "  scores: list of integer, as declared",
        "  note: ignored",
        "  :LABEL: labels",
    ] {
        assert!(log.contains(line), "{line}: {log}");
    }
    let q = |text: &str| query_csv(&cfg, text);
    assert_eq!(
        q("MATCH (p:Person)-[r:IS_LOCATED_IN]->(c:City)-[:IS_PART_OF]->(k:Country)-[:IS_PART_OF]->(e:Continent) \
           RETURN p.firstName AS p, r.since AS s, c.name AS c, k.name AS k, e.name AS e ORDER BY p"),
        "p,s,c,k,e\nAnn,2000,Berlin,Germany,Europe\nBob,2001,Paris,France,Europe\n"
    );
    assert_eq!(q("MATCH (x:Place) RETURN count(x) AS n"), "n\n5\n");
    assert_eq!(
        q("MATCH (p:Person) WHERE p.birthday < date('1988-01-01') RETURN p.firstName AS n"),
        "n\nBob\n"
    );
    assert_eq!(
        q("MATCH (p:Person) WHERE p.creationDate >= datetime('2011-01-01T00:00:00Z') RETURN p.firstName AS n"),
        "n\nBob\n"
    );
    assert_eq!(
        q("MATCH (p:Person {firstName: 'Ann'}) RETURN size(p.tags) AS t, p.tags[0] AS f, p.scores[1] AS s"),
        "t,f,s\n2,a,2\n"
    );
    let keys = q("MATCH (p:Person {firstName: 'Ann'}) RETURN keys(p) AS k");
    assert!(keys.contains("tags") && !keys.contains("note"), "{keys}");
    let city = q("MATCH (c:City {name: 'Berlin'}) RETURN labels(c) AS l, keys(c) AS k");
    assert!(
        city.contains("['City', 'Place']") && !city.contains("url") && !city.contains("LABEL"),
        "{city}"
    );
    assert_eq!(
        q("MATCH (a:Person)-[r:KNOWS]->(b:Person) RETURN a.firstName AS a, r.weight AS w, b.firstName AS b"),
        "a,w,b\nAnn,0.5,Bob\n"
    );
    assert_eq!(
        q("MATCH (:Person)-[r:LIKES]->(:Person) RETURN count(r) AS n"),
        "n\n2\n"
    );
    // One relationship table per (type, from table, to table) the rows hold.
    let toml: toml::Value = toml::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    let mut rels: Vec<String> = toml["relationships"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let part = |k: &str| r[k].as_str().unwrap().to_string();
            format!("{}:{}:{}", part("type"), part("from"), part("to"))
        })
        .collect();
    rels.sort();
    assert_eq!(
        rels,
        [
            "IS_LOCATED_IN:Person:City",
            "IS_PART_OF:City:Country",
            "IS_PART_OF:Country:Continent",
            "KNOWS:Person:Person",
            "LIKES:Person:Person",
        ]
    );
}

/// An end whose label several node tables carry: the rows split by the table holding the key;
/// a key no table holds is an error naming it.
#[test]
fn a_relationship_to_a_shared_label_splits_by_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let city = write(d, "city.csv", "id,name\n1,Berlin\n2,Paris\n");
    let country = write(d, "country.csv", "id,name\n10,Germany\n20,France\n");
    let person = write(d, "person.csv", "id,name\n100,Ann\n101,Bob\n102,Cy\n");
    let located = write(d, "loc.csv", "src,dst\n100,1\n101,20\n102,2\n");
    let nodes = [
        format!("City,Place={city}"),
        format!("Country,Place={country}"),
        format!("Person={person}"),
    ];
    let args = |rel: &str| {
        let mut a: Vec<String> = nodes
            .iter()
            .flat_map(|n| ["--node".into(), n.clone()])
            .collect();
        a.extend(["--rel".into(), format!("IS_LOCATED_IN:Person:Place={rel}")]);
        a
    };
    let a = args(&located);
    let (cfg, _) = import(d, "g", &a.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    assert_eq!(
        query_csv(
            &cfg,
            "MATCH (p:Person)-[:IS_LOCATED_IN]->(x:Place) RETURN p.name AS p, x.name AS x ORDER BY p"
        ),
        "p,x\nAnn,Berlin\nBob,France\nCy,Paris\n"
    );
    assert_eq!(
        query_csv(
            &cfg,
            "MATCH (:Person)-[:IS_LOCATED_IN]->(c:City) RETURN count(c) AS n"
        ),
        "n\n2\n"
    );
    let dangling = write(d, "loc2.csv", "src,dst\n100,1\n101,999\n");
    let a = args(&dangling);
    let e = import(d, "h", &a.iter().map(String::as_str).collect::<Vec<_>>()).unwrap_err();
    assert!(
        e.contains("loc2.csv") && e.contains("999") && e.contains("no node table"),
        "{e}"
    );
}

/// `--node-label-column`: a table per value of the column, the --node's labels added to each.
#[test]
fn a_label_column_makes_a_table_per_label() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let things = write(
        d,
        "things.csv",
        "id,kind,name\n1,Cat,Tom\n2,Dog,Rex\n3,Cat,Kit\n",
    );
    let node = format!("Animal={things}");
    let (cfg, _) = import(d, "g", &["--node", &node, "--node-label-column", "kind"]).unwrap();
    assert_eq!(
        query_csv(&cfg, "MATCH (c:Cat) RETURN count(c) AS n"),
        "n\n2\n"
    );
    assert_eq!(
        query_csv(&cfg, "MATCH (a:Animal) RETURN count(a) AS n"),
        "n\n3\n"
    );
    assert_eq!(
        query_csv(&cfg, "MATCH (d:Dog) RETURN d.name AS n, labels(d) AS l"),
        "n,l\nRex,\"['Dog', 'Animal']\"\n"
    );
    let keys = query_csv(&cfg, "MATCH (d:Dog) RETURN keys(d) AS k");
    assert!(!keys.contains("kind"), "{keys}");
    let e = import(d, "h", &["--node", &node, "--node-label-column", "nope"]).unwrap_err();
    assert!(e.contains("no node file has a column `nope`"), "{e}");
}

/// Labels are trimmed and none may be empty; a table given twice says the first label names it.
#[test]
fn label_mistakes_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let posts = write(d, "posts.csv", "id,text\n1,hi\n");
    let cities = write(d, "cities.csv", "id,name\n1,Berlin\n");
    let (cfg, _) = import(d, "g", &["--node", &format!("Post, Message={posts}")]).unwrap();
    assert_eq!(
        query_csv(&cfg, "MATCH (m:Message) RETURN labels(m) AS l"),
        "l\n\"['Post', 'Message']\"\n"
    );
    let e = import(d, "h", &["--node", &format!("Post, ={posts}")]).unwrap_err();
    assert!(e.contains("empty label"), "{e}");
    let e = import(
        d,
        "h",
        &[
            "--node",
            &format!("Place,Country={posts}"),
            "--node",
            &format!("Place,City={cities}"),
        ],
    )
    .unwrap_err();
    assert!(
        e.contains(
            "--node Place,City: table `Place` given twice (the first label names the table; \
             write City,Place to make a City table that is also a Place)"
        ),
        "{e}"
    );
    let e = import(
        d,
        "h",
        &["--delimiter", "||", "--node", &format!("Post={posts}")],
    )
    .unwrap_err();
    assert!(e.contains("not one character"), "{e}");
}
