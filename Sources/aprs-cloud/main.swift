import Store
print(StorePlaceholder.count)
