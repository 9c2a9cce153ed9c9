"""Python syntax facts, written once: tree-sitter-python node kinds, construct names, the
keywords that start a definition, and ``ast`` scope walks.

Classification (records, the node tier, the line heuristic), enrichment (the ast-grep and
tree-sitter readings, the import and ``ast`` stages, the LibCST skeleton) and the rewriter's
vocabulary read these tables; LibCST's own node classes stay in its stage, an independent
reading of the same code that only shares the construct names.
"""

from __future__ import annotations

import ast

from cq.model import Category

# tree-sitter-python node kinds
DEFINITIONS = {"function_definition": "function_def", "class_definition": "class_def"}
IMPORT_STATEMENTS = frozenset(
    {"import_statement", "import_from_statement", "future_import_statement"}
)
PARAMETER_LISTS = frozenset({"parameters", "lambda_parameters"})
NAMED_PARAMETERS = frozenset({"typed_parameter", "default_parameter", "typed_default_parameter"})
SPLAT_PATTERNS = frozenset({"list_splat_pattern", "dictionary_splat_pattern"})
PARAMETER_WRAPPERS = NAMED_PARAMETERS | SPLAT_PATTERNS  # hold a parameter's name
STRING_PARTS = frozenset(
    {"string", "string_content", "string_start", "string_end", "escape_sequence"}
)
# Assignment targets that unpack into the names they hold (``a, (b, *c) = ...``).
UNPACKING_TARGETS = frozenset(
    {
        "pattern_list",
        "tuple_pattern",
        "list_pattern",
        "tuple",
        "list",
        "list_splat_pattern",
        "list_splat",
        "parenthesized_expression",
        "as_pattern_target",
    }
)
# The construct around a piece of text that is not one identifier (the node tier).
NODE_CATEGORIES: dict[str, Category] = {
    "call": "callsite",
    "decorator": "callsite",
    "function_definition": "definition",
    "class_definition": "definition",
    "assignment": "assignment",
    "augmented_assignment": "assignment",
    "import_statement": "import",
    "import_from_statement": "from_import",
}

# Construct names (``Enrichment.construct``) that every Python reading reports alike.
FUNCTION_DEF, CLASS_DEF, TYPE_ALIAS = "function_def", "class_def", "type_alias"
IMPORT, CALL, DECORATOR, PARAMETER = "import", "call", "decorator", "parameter"
ANNOTATION, ASSIGNMENT_TARGET, KEYWORD = "annotation", "assignment_target", "keyword"
ATTRIBUTE, NAME, COMMENT, STRING, OTHER = "attribute", "name", "comment", "string", "other"

# Source text: the keywords that open a definition (``async`` may precede ``def``).
DEFINITION_KEYWORDS = ("def", "class")

# ``ast``: nodes that open a scope of their own.
AST_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
AST_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
AST_SCOPES = (*AST_DEFINITIONS, ast.Lambda)


def scope_nodes(roots: list[ast.AST]) -> list[ast.AST]:
    """``roots`` and everything under them in the same scope: a nested def, class or lambda
    is listed but not entered (its names and its awaits are its own)."""
    out: list[ast.AST] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, AST_SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return out
