a = 1
/* comment