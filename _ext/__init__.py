"""The book's Sphinx extensions, loaded as ``_ext.NAME`` from the repository's root.

``_config.yml`` names each under ``sphinx.local_extensions`` with the path ``.``: jupyter-book
makes the root importable, so an extension imports the tools as ``tools.NAME``.
"""
