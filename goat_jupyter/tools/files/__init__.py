"""The file tools: Read, Write, Edit, LS, Delete and Move, with Edit's matcher, omission-placeholder checks, Read's line windows and its image/PDF formats."""
