# Our own task lines for tests, in the layout of MultiSessionCollab's datasets/__init__.py.
# rapport reads only the string literals of datasets_info; the classes are not needed.

datasets_info = {
    "math-hard": {
        "class": None,
        "task_description": "Get help with this hard math question:",
    },
    "math-500": {
        "class": None,
        "task_description": "Get help with this math question:",
    },
    "logiqa": {
        "class": None,
        "task_description": "Get help with this logic puzzle:",
    },
    "mmlu": {
        "class": None,
        "task_description": "Get help choosing an option in this question:",
    },
    "medqa": {
        "class": None,
        "task_description": "Get help with this clinical question:",
    },
}
