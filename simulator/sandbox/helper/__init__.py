"""What runs in the sandbox's own processes: the fork-server helper and the sandboxed children.

Stdlib only, relative imports only: the helper starts as ``python -P -s -S`` (no
site-packages, so no metasre) and boots this folder as a private package named
``_metasre_sandbox`` (see ``sandbox._host``). The caller imports it too, for the messages
(``protocol``) and a run's collector (``collector``), never for behaviour.

- ``protocol``: every message between the caller, the helper and a child, with named fields.
- ``server``: the helper's event loop (spares, runs, replies); ``child``: one run, end to end.
- ``minitest`` runs a visible suite; ``probe`` calls a grader run's probes.
- ``landlock``, ``seccomp``, ``isolation``, ``guard``: the containment layers.
- ``collector`` turns a child's frames and exit into a reply; ``warmup``, ``folders``: upkeep.
- ``accel/``: what a visible helper keeps between runs to go faster (generated code, the
  in-memory import of compiled files); behind ``ForkServerRunner(accelerate=...)``.
"""
