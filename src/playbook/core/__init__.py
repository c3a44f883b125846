"""The pure layer: the data model and its vocabulary, the delta union, scoring, policy, limits,
text helpers and errors, and `files` (the one reader and writer of the files a
user names). No database, no framework."""
