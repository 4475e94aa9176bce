print("ok")
def main(): print("hello")
