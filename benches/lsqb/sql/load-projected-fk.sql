-- Loads LSQB's tables (schema.sql) from the projected-FK CSV files in PATHVAR, the files the
-- graph engines read, instead of LSQB's merged-FK files (sql/snb-load.sql in LSQB): each node
-- table takes its single-valued foreign keys from the edge files of the same name
-- (Comment.hasCreator_PersonId from Comment_hasCreator_Person.csv, Post.Forum_containerOfId
-- from Forum_containerOf_Post.csv, ...); the many-to-many edge files load as they are, and
-- Person_knows_Person in both directions, as in LSQB's snb-load.sql. Left joins: a node without
-- a key that schema.sql declares NOT NULL fails the load instead of vanishing (lsqb.py also
-- checks that every node table has as many rows as its file: no node with two such keys).
-- Not one of LSQB's files; written for benches/lsqb/lsqb.py.

CREATE MACRO nodes(f) AS TABLE
  SELECT * FROM read_csv(f, delim = '|', header = true, columns = {'id': 'BIGINT'});
CREATE MACRO edges(f) AS TABLE
  SELECT * FROM read_csv(f, delim = '|', header = true, columns = {'src': 'BIGINT', 'dst': 'BIGINT'});

INSERT INTO Company (CompanyId, isLocatedIn_CountryId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/Company.csv') n
  LEFT JOIN edges('PATHVAR/Company_isLocatedIn_Country.csv') e ON e.src = n.id;
INSERT INTO University (UniversityId, isLocatedIn_CityId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/University.csv') n
  LEFT JOIN edges('PATHVAR/University_isLocatedIn_City.csv') e ON e.src = n.id;
INSERT INTO Continent (ContinentId)
  SELECT n.id FROM nodes('PATHVAR/Continent.csv') n;
INSERT INTO Country (CountryId, isPartOf_ContinentId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/Country.csv') n
  LEFT JOIN edges('PATHVAR/Country_isPartOf_Continent.csv') e ON e.src = n.id;
INSERT INTO City (CityId, isPartOf_CountryId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/City.csv') n
  LEFT JOIN edges('PATHVAR/City_isPartOf_Country.csv') e ON e.src = n.id;
INSERT INTO Tag (TagId, hasType_TagClassId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/Tag.csv') n
  LEFT JOIN edges('PATHVAR/Tag_hasType_TagClass.csv') e ON e.src = n.id;
INSERT INTO TagClass (TagClassId, isSubclassOf_TagClassId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/TagClass.csv') n
  LEFT JOIN edges('PATHVAR/TagClass_isSubclassOf_TagClass.csv') e ON e.src = n.id;
INSERT INTO Forum (ForumId, hasModerator_PersonId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/Forum.csv') n
  LEFT JOIN edges('PATHVAR/Forum_hasModerator_Person.csv') e ON e.src = n.id;
INSERT INTO Comment (CommentId, hasCreator_PersonId, isLocatedIn_CountryId, replyOf_PostId, replyOf_CommentId)
  SELECT n.id, c.dst, l.dst, p.dst, r.dst FROM nodes('PATHVAR/Comment.csv') n
  LEFT JOIN edges('PATHVAR/Comment_hasCreator_Person.csv') c ON c.src = n.id
  LEFT JOIN edges('PATHVAR/Comment_isLocatedIn_Country.csv') l ON l.src = n.id
  LEFT JOIN edges('PATHVAR/Comment_replyOf_Post.csv') p ON p.src = n.id
  LEFT JOIN edges('PATHVAR/Comment_replyOf_Comment.csv') r ON r.src = n.id;
INSERT INTO Post (PostId, hasCreator_PersonId, Forum_containerOfId, isLocatedIn_CountryId)
  SELECT n.id, c.dst, f.src, l.dst FROM nodes('PATHVAR/Post.csv') n
  LEFT JOIN edges('PATHVAR/Post_hasCreator_Person.csv') c ON c.src = n.id
  LEFT JOIN edges('PATHVAR/Forum_containerOf_Post.csv') f ON f.dst = n.id
  LEFT JOIN edges('PATHVAR/Post_isLocatedIn_Country.csv') l ON l.src = n.id;
INSERT INTO Person (PersonId, isLocatedIn_CityId)
  SELECT n.id, e.dst FROM nodes('PATHVAR/Person.csv') n
  LEFT JOIN edges('PATHVAR/Person_isLocatedIn_City.csv') e ON e.src = n.id;

INSERT INTO Comment_hasTag_Tag        SELECT src, dst FROM edges('PATHVAR/Comment_hasTag_Tag.csv');
INSERT INTO Post_hasTag_Tag           SELECT src, dst FROM edges('PATHVAR/Post_hasTag_Tag.csv');
INSERT INTO Forum_hasMember_Person    SELECT src, dst FROM edges('PATHVAR/Forum_hasMember_Person.csv');
INSERT INTO Forum_hasTag_Tag          SELECT src, dst FROM edges('PATHVAR/Forum_hasTag_Tag.csv');
INSERT INTO Person_hasInterest_Tag    SELECT src, dst FROM edges('PATHVAR/Person_hasInterest_Tag.csv');
INSERT INTO Person_likes_Comment      SELECT src, dst FROM edges('PATHVAR/Person_likes_Comment.csv');
INSERT INTO Person_likes_Post         SELECT src, dst FROM edges('PATHVAR/Person_likes_Post.csv');
INSERT INTO Person_studyAt_University SELECT src, dst FROM edges('PATHVAR/Person_studyAt_University.csv');
INSERT INTO Person_workAt_Company     SELECT src, dst FROM edges('PATHVAR/Person_workAt_Company.csv');
INSERT INTO Person_knows_Person (Person1Id, Person2Id) SELECT src, dst FROM edges('PATHVAR/Person_knows_Person.csv');
INSERT INTO Person_knows_Person (Person1Id, Person2Id) SELECT dst, src FROM edges('PATHVAR/Person_knows_Person.csv');

DROP MACRO TABLE nodes;
DROP MACRO TABLE edges;
