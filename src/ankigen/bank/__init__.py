"""The banks: the bank format (model, reader and its fast paths), YAML with line numbers,
the bank files of a folder, and the project file beside them."""
