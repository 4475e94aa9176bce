"""Tools from Model Context Protocol servers: their configuration (``config``) and the names the model sees
(``names``)."""
