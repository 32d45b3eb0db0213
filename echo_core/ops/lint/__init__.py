"""``lint`` / ``health``: the vault's consistency checks (SPEC §5.2).

``run.lint(ctx, checks, fix=, apply=)`` reads the vault once (``snapshot``), runs the
checks of ``registry.CHECKS`` on the parsed notes (one module per theme: layout, links,
frontmatter, index drift, content, duplicates, contradictions), scores every entity
note (``quality``), and with ``fix`` makes the mechanical repairs (``repairs``).
"""
